//! The `sextant` command line: explore a trace in the terminal UI, import traces, query
//! them, write databases.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use color_eyre::eyre::{eyre, Result, WrapErr};

use sextant::database;
use sextant::tui::importer::Input;

#[derive(Parser)]
#[command(
    name = "sextant",
    version,
    about = "Merge and explore multi-machine traces (Perfetto protobuf, Chrome JSON, systrace) from the terminal"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Trace file or archive to explore (or a database written by `sextant import`); several
    /// files, or a directory, open as one merge; without one, the built-in demo opens.
    traces: Vec<PathBuf>,
    /// The most one compressed stream (a gzip file, a ZIP member) may decompress to, e.g.
    /// 64G or 500M; past it the import fails, naming the member. Default 16G, or
    /// $SEXTANT_MAX_DECOMPRESSED.
    #[arg(long = "max-decompressed", value_name = "SIZE", global = true, value_parser = parse_limit)]
    max_decompressed: Option<u64>,
    /// As trace_processor_shell's flag: annotate each TrackEvent row of
    /// `__sextant_proto_content` with an arg set holding `event.category` and `event.name`.
    /// Default: on for `sextant query` of a trace (as Perfetto's own tests run the shell),
    /// off otherwise (as the shell and the Perfetto UI); also
    /// $SEXTANT_ANALYZE_PROTO_CONTENT=1|0.
    #[arg(long = "analyze-trace-proto-content", global = true, value_name = "BOOL",
          num_args = 0..=1, default_missing_value = "true", require_equals = true)]
    analyze_trace_proto_content: Option<bool>,
    /// As trace_processor_shell's flag: drop TrackEvents before the start of the range of
    /// interest a TrackEventRangeOfInterest packet names (counted in `stats`). Default as
    /// --analyze-trace-proto-content's; also $SEXTANT_CROP_TRACK_EVENTS=1|0.
    #[arg(long = "crop-track-events", global = true, value_name = "BOOL",
          num_args = 0..=1, default_missing_value = "true", require_equals = true)]
    crop_track_events: Option<bool>,
}

/// A `--max-decompressed` value.
fn parse_limit(s: &str) -> Result<u64, String> {
    sextant::source::parse_size(s).ok_or_else(|| format!("{s:?} is not a size (e.g. 64G, 500M)"))
}

#[derive(Subcommand)]
enum Command {
    /// Merge traces into one archive with a perfetto_manifest (or print the manifest): name
    /// their machines, sync their clocks, choose trace time. Prints where every file lands
    /// and what would be dropped before writing.
    Merge {
        /// The traces to merge (members are named by base name).
        #[arg(required = true, num_args = 1..)]
        files: Vec<PathBuf>,
        /// OUT.tar or OUT.zip: the files plus perfetto_manifest.json; `-` prints only the
        /// manifest JSON.
        #[arg(short = 'o', long = "output", value_name = "OUT")]
        output: PathBuf,
        /// FILE=NAME: the whole file is machine NAME (files[].machine).
        #[arg(long = "machine", value_name = "FILE=NAME")]
        machine: Vec<String>,
        /// FILE=ID:NAME[,ID:NAME...]: names the machine ids a multi-machine trace embeds
        /// (a name the trace gives a machine itself, SystemInfo machine_name, still wins).
        #[arg(long = "machines", value_name = "FILE=ID:NAME,...")]
        machines: Vec<String>,
        /// FILE[@MACHINE][:CLOCK]=REF[@MACHINE][:CLOCK][,OFFSET]: with the source CLOCK,
        /// relates that clock to the reference (RELATE: for traces placed by their clocks);
        /// without it, pins the file's own timeline (PIN: for JSON traces). Without the
        /// reference CLOCK, REF's own timeline. @MACHINE names one machine of a file that
        /// has a --machines block. OFFSET in whole ns or with a unit (250ms, -1.5s, 40us,
        /// 1min): the file moves later by it.
        #[arg(long = "sync", value_name = "FILE[:CLOCK]=REF[:CLOCK][,OFFSET]")]
        sync: Vec<String>,
        /// CLOCK[=FILE[@MACHINE]]: the clock of the merged timeline, on FILE's machine (or
        /// MACHINE of a multi-machine FILE).
        #[arg(long = "trace-time", value_name = "CLOCK[=FILE]")]
        trace_time: Vec<String>,
        /// Write even when events would be dropped (placed before trace time's zero, or
        /// with no path to it).
        #[arg(long = "allow-drops")]
        allow_drops: bool,
    },
    /// Print the perfetto_manifest in effect for an archive, loose files or a directory, or
    /// a database written by `sextant import` (or say there is none).
    Manifest {
        /// An archive (ZIP, TAR, gzip), files or a directory, or a database.
        #[arg(required = true, num_args = 1..)]
        traces: Vec<PathBuf>,
    },
    /// Run SQL on a trace and print each result set as CSV (like trace_processor_shell -q).
    Query {
        /// Trace file(s) or archive (several open as one merge), or a database written by
        /// `sextant import`, then the SQL to run (several statements separated by `;`)
        /// unless -q gives it.
        #[arg(required = true, num_args = 1.., value_name = "TRACE... [SQL]")]
        args: Vec<std::ffi::OsString>,
        /// Read the SQL from this file instead.
        #[arg(short = 'q', long = "query-file")]
        query_file: Option<PathBuf>,
    },
    /// Import a trace into an SQLite database file that `sqlite3` and `sextant` can open.
    Import {
        /// Trace file(s) or archive; several open as one merge.
        #[arg(required = true, num_args = 1..)]
        traces: Vec<PathBuf>,
        /// Where to write the database.
        #[arg(short = 'o', long = "output")]
        output: PathBuf,
    },
}

fn main() -> ExitCode {
    // color-eyre reports errors; its panic report is printed by `sextant::shutdown`'s hook,
    // which restores the terminal first. SIGINT, SIGTERM and SIGHUP end the process through
    // `sextant::shutdown` too, which removes the temporary files.
    let (panic_hook, eyre_hook) = color_eyre::config::HookBuilder::default().into_hooks();
    if let Err(e) = eyre_hook.install() {
        warn(format_args!("{e}"));
    }
    let report =
        move |info: &std::panic::PanicHookInfo<'_>| panic_hook.panic_report(info).to_string();
    if let Err(e) = sextant::shutdown::install(Box::new(report)) {
        warn(format_args!("cannot handle signals: {e}"));
    }
    let cli = Cli::parse();
    if let Some(limit) = cli.max_decompressed {
        // One setting for every way in (the explorer's importer thread opens inputs too):
        // the flag overrides the environment, before any thread starts.
        std::env::set_var(sextant::source::LIMIT_ENV, limit.to_string());
    }
    // `sextant query TRACE` imports as Perfetto's diff tests run trace_processor_shell
    // (`--analyze-trace-proto-content --crop-track-events`), so their expected outputs
    // compare directly; the explorer and `sextant import` as the plain shell and the UI do.
    // A flag wins over the environment, which wins over that default.
    let one_shot = matches!(cli.command, Some(Command::Query { .. }));
    for (flag, env) in [
        (
            cli.analyze_trace_proto_content,
            sextant::parse::proto::ANALYZE_PROTO_CONTENT_ENV,
        ),
        (
            cli.crop_track_events,
            sextant::parse::proto::CROP_TRACK_EVENTS_ENV,
        ),
    ] {
        match flag {
            Some(on) => std::env::set_var(env, if on { "1" } else { "0" }),
            None if one_shot && std::env::var_os(env).is_none() => std::env::set_var(env, "1"),
            None => {}
        }
    }
    // What crashed or killed runs left in the temp directory.
    sextant::cleanup::sweep_stale(&std::env::temp_dir());
    let code = match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            warn(format_args!("{e:#}"));
            ExitCode::FAILURE
        }
    };
    // Everything is cleaned up: a run asked to end by a signal now ends by it.
    sextant::shutdown::finish();
    code
}

/// `1 file`, `3 files`.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Prints to stderr; a stderr that is gone (a hung-up terminal) is not an error then.
fn warn(message: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr(), "sextant: {message}");
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Some(Command::Query {
            mut args,
            query_file,
        }) => {
            let sql = match query_file {
                Some(file) => std::fs::read_to_string(&file)
                    .wrap_err_with(|| format!("cannot read query file {}", file.display()))?,
                None if args.len() >= 2 => args
                    .pop()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                None => return Err(eyre!("give the SQL to run after the trace, or -q FILE")),
            };
            let traces: Vec<PathBuf> = args.into_iter().map(PathBuf::from).collect();
            let (db, _) = database::open_trace(&traces, None)?;
            let conn = sextant::db::open_read_only(&db.path)?;
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            sextant::db::run_script(&conn, &sql, &mut out)?;
            out.flush()?;
            Ok(())
        }
        Some(Command::Merge {
            files,
            output,
            machine,
            machines,
            sync,
            trace_time,
            allow_drops,
        }) => {
            let to_stdout = output.as_os_str() == "-";
            // Where it goes is checked before the files are read.
            if !to_stdout {
                sextant::merge::check_output(&output, &files)?;
            }
            let options = sextant::merge::MergeOptions {
                files: files.clone(),
                machine,
                machines,
                sync,
                trace_time,
            };
            let manifest = sextant::merge::build_manifest(&options)?;
            let json = sextant::merge::to_json(&manifest);
            let preview = sextant::merge::preview(&files, &json)?;
            let mut err = std::io::stderr().lock();
            let _ = writeln!(
                err,
                "{} would be placed so:",
                plural(files.len(), "file", "files")
            );
            for line in preview.lines() {
                let _ = writeln!(err, "{line}");
            }
            drop(err);
            if !preview.problems.is_empty() {
                return Err(eyre!("nothing written: {}", preview.problems.join("\n  ")));
            }
            if preview.drops_events() && !allow_drops {
                return Err(eyre!("{}", preview.drop_refusal()));
            }
            if to_stdout {
                print!("{json}");
            } else {
                sextant::merge::write_archive(&output, &files, &json)?;
                let _ = writeln!(std::io::stderr(), "wrote {}", output.display());
            }
            Ok(())
        }
        Some(Command::Manifest { traces }) => {
            match sextant::merge::manifest_of(&traces)? {
                sextant::merge::ManifestOf::Text(text) => print!("{text}"),
                sextant::merge::ManifestOf::None(why) => warn(format_args!("{why}")),
            }
            Ok(())
        }
        Some(Command::Import { traces, output }) => {
            let (_, summary) = database::open_trace(&traces, Some(&output))?;
            if let Some(s) = summary {
                eprintln!(
                    "imported {} ({} slices, {} counters, {} sched rows) into {} in {:.2}s",
                    sextant::source::loose_name(&traces),
                    s.slices,
                    s.counters,
                    s.sched,
                    output.display(),
                    s.total_secs
                );
            }
            Ok(())
        }
        None => {
            // The explorer needs a terminal on both ends; piped or scripted, `sextant TRACE`
            // prints a summary instead.
            let interactive = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
            if interactive {
                let input = match cli.traces.is_empty() {
                    false => Input::Paths(cli.traces),
                    true => Input::Bytes {
                        name: sextant::demo::NAME.to_string(),
                        bytes: sextant::demo::DEMO_ZIP,
                    },
                };
                sextant::tui::run(input)?;
                return Ok(());
            }
            if cli.traces.is_empty() {
                return Err(eyre!(
                    "sextant without a trace opens the explorer, which needs a terminal; give a trace to print its summary (see sextant --help)"
                ));
            }
            let (db, summary) = database::open_trace(&cli.traces, None)?;
            let conn = sextant::db::open_read_only(&db.path)?;
            if let Some(s) = summary {
                println!(
                    "{}: {}, {} events in {:.2}s",
                    sextant::source::loose_name(&cli.traces),
                    plural(s.files, "file", "files"),
                    s.events,
                    s.total_secs
                );
            }
            let mut out = std::io::stdout().lock();
            sextant::db::run_script(
                &conn,
                "SELECT (SELECT count(*) FROM machine) AS machines,
                        (SELECT count(*) FROM process) AS processes,
                        (SELECT count(*) FROM thread) AS threads,
                        (SELECT count(*) FROM slice) AS slices,
                        (SELECT count(*) FROM counter) AS counters,
                        (SELECT count(*) FROM sched) AS sched;
                 SELECT name, severity, value
                 FROM (SELECT * FROM stats UNION ALL SELECT * FROM sextant_stats)
                 WHERE value > 0 AND severity IN ('error', 'data_loss') ORDER BY name",
                &mut out,
            )?;
            Ok(())
        }
    }
}
