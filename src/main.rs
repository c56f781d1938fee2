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
    about = "Merge and explore multi-machine traces (Perfetto protobuf, Chrome JSON, systrace) from the terminal",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Trace file or archive to explore (or a database written by `sextant import`); without
    /// one, the built-in demo archive opens.
    trace: Option<PathBuf>,
    /// The most one compressed stream (a gzip file, a ZIP member) may decompress to, e.g.
    /// 64G or 500M; past it the import fails, naming the member. Default 16G, or
    /// $SEXTANT_MAX_DECOMPRESSED.
    #[arg(long = "max-decompressed", value_name = "SIZE", global = true, value_parser = parse_limit)]
    max_decompressed: Option<u64>,
}

/// A `--max-decompressed` value.
fn parse_limit(s: &str) -> Result<u64, String> {
    sextant::source::parse_size(s).ok_or_else(|| format!("{s:?} is not a size (e.g. 64G, 500M)"))
}

#[derive(Subcommand)]
enum Command {
    /// Run SQL on a trace and print each result set as CSV (like trace_processor_shell -q).
    Query {
        /// Trace file or archive, or a database written by `sextant import`.
        trace: PathBuf,
        /// SQL to run (several statements separated by `;`).
        sql: Option<String>,
        /// Read the SQL from this file instead.
        #[arg(short = 'q', long = "query-file", conflicts_with = "sql")]
        query_file: Option<PathBuf>,
    },
    /// Import a trace into an SQLite database file that `sqlite3` and `sextant` can open.
    Import {
        /// Trace file or archive.
        trace: PathBuf,
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

/// Prints to stderr; a stderr that is gone (a hung-up terminal) is not an error then.
fn warn(message: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr(), "sextant: {message}");
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Some(Command::Query {
            trace,
            sql,
            query_file,
        }) => {
            let sql = match (sql, query_file) {
                (Some(sql), _) => sql,
                (None, Some(file)) => std::fs::read_to_string(&file)
                    .wrap_err_with(|| format!("cannot read query file {}", file.display()))?,
                (None, None) => return Err(eyre!("give the SQL to run, or -q FILE")),
            };
            let (db, _) = database::open_trace(&trace, None)?;
            let conn = sextant::db::open_read_only(&db.path)?;
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            sextant::db::run_script(&conn, &sql, &mut out)?;
            out.flush()?;
            Ok(())
        }
        Some(Command::Import { trace, output }) => {
            let (_, summary) = database::open_trace(&trace, Some(&output))?;
            if let Some(s) = summary {
                eprintln!(
                    "imported {} ({} slices, {} counters, {} sched rows) into {} in {:.2}s",
                    trace.display(),
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
                let input = match cli.trace {
                    Some(trace) => Input::Path(trace),
                    None => Input::Bytes {
                        name: sextant::demo::NAME.to_string(),
                        bytes: sextant::demo::DEMO_ZIP,
                    },
                };
                sextant::tui::run(input)?;
                return Ok(());
            }
            let Some(trace) = cli.trace else {
                return Err(eyre!(
                    "sextant without a trace opens the explorer, which needs a terminal; give a trace to print its summary (see sextant --help)"
                ));
            };
            let (db, summary) = database::open_trace(&trace, None)?;
            let conn = sextant::db::open_read_only(&db.path)?;
            if let Some(s) = summary {
                println!(
                    "{}: {} files, {} events in {:.2}s",
                    trace.display(),
                    s.files,
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
                 SELECT name, severity, value FROM stats
                 WHERE value > 0 AND severity IN ('error', 'data_loss') ORDER BY name",
                &mut out,
            )?;
            Ok(())
        }
    }
}
