//! The clock-graph pane's editor: a file's machine name and its sync (none, PIN to another
//! file's clock or timeline, RELATE one of its clocks), with an offset. Every edit is
//! previewed — where each file would land, how far it moves, what would be dropped —
//! before it is applied; applying re-places without parsing again; `u` undoes the last
//! applied edit; `w` writes the files and the manifest as a new archive. The timeline's
//! `M` on two slices of different files ("the same moment") fills in the offset that makes
//! their starts coincide.
//!
//! State and keys here; the import thread does the work ([`EditCommand`]s become importer
//! commands), and [`draw`] shows the strip, the form and the preview.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

use crate::import::FilePreview;
use crate::manifest::{self, ClockOverride, Manifest, SyncTo, CLOCK_NAMES};

use super::format;
use super::sanitize::sanitize;
use super::theme::Theme;

/// What the editor asks of the import thread.
#[derive(Debug, PartialEq)]
pub enum EditCommand {
    Preview(Manifest),
    Apply(Manifest),
    /// The files and the manifest in effect, as a new archive.
    Write,
    /// The manifest in effect alone, as a new JSON file.
    WriteManifest,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncMode {
    /// The file is placed by the default rules.
    None,
    /// The file's own timeline, pinned to the reference.
    Pin,
    /// One of the file's clocks, related to the reference.
    Relate,
}

/// The form for one file.
#[derive(Clone, Debug, PartialEq)]
pub struct Form {
    pub file: String,
    pub field: usize,
    pub machine: String,
    pub mode: SyncMode,
    /// Index into [`CLOCK_NAMES`].
    pub clock: usize,
    /// Index into the other members.
    pub reference: usize,
    /// 0: the reference file's own timeline; else index + 1 into [`CLOCK_NAMES`].
    pub ref_clock: usize,
    pub offset: String,
}

const FIELDS: usize = 6;

/// The preview of an edit, and the manifest it is for.
#[derive(Clone, Debug, PartialEq)]
pub enum Preview {
    Waiting(Manifest),
    Ready(Manifest, Result<Vec<FilePreview>, String>),
}

#[derive(Debug, Default)]
pub struct EditState {
    /// The manifest in effect, and the trace files' member names.
    pub manifest: Option<Manifest>,
    pub members: Vec<String>,
    /// Manifests applied before, newest last.
    pub undo: Vec<Manifest>,
    /// The file the strip points at.
    pub cursor: usize,
    pub form: Option<Form>,
    pub preview: Option<Preview>,
    /// What happened last (an applied edit, a written archive, or why not).
    pub message: Option<Result<String, String>>,
    /// An edit (or an undo) is being applied.
    pub applying: bool,
    /// The manifest being applied, to push on the undo stack once it is.
    pending_undo: Option<Manifest>,
}

/// The next (or previous) field the form shows with sync `mode`: the source clock only for
/// RELATE, the reference and offset only when the file syncs at all.
fn step_field(mode: SyncMode, field: usize, forward: bool) -> usize {
    let shown = |f: usize| match f {
        2 => mode == SyncMode::Relate,
        3..=5 => mode != SyncMode::None,
        _ => true,
    };
    let mut f = field;
    for _ in 0..FIELDS {
        f = if forward {
            (f + 1) % FIELDS
        } else {
            (f + FIELDS - 1) % FIELDS
        };
        if shown(f) {
            return f;
        }
    }
    field
}

fn clock_index(id: Option<u32>) -> Option<usize> {
    let id = id?;
    CLOCK_NAMES.iter().position(|(_, c)| *c == id)
}

impl EditState {
    pub fn set_manifest(&mut self, manifest: Manifest, members: Vec<String>) {
        self.manifest = Some(manifest);
        self.members = members;
        self.cursor = self.cursor.min(self.members.len().saturating_sub(1));
    }

    /// The form is open: keys type into it.
    pub fn editing(&self) -> bool {
        self.form.is_some()
    }

    fn others(&self, file: &str) -> Vec<String> {
        self.members
            .iter()
            .filter(|m| *m != file)
            .cloned()
            .collect()
    }

    /// Opens the form on `file`, as the manifest in effect has it.
    pub fn open(&mut self, file: &str) {
        let Some(m) = &self.manifest else { return };
        let entry = m.entry(file);
        let others = self.others(file);
        let clocks = entry.and_then(|e| e.clocks.as_ref());
        let mode = match clocks {
            None => SyncMode::None,
            Some(c) if c.is_pin() => SyncMode::Pin,
            Some(_) => SyncMode::Relate,
        };
        let boottime = clock_index(manifest::clock_id("BOOTTIME")).unwrap_or(0);
        self.form = Some(Form {
            file: file.to_string(),
            field: 0,
            machine: entry.and_then(|e| e.machine.clone()).unwrap_or_default(),
            mode,
            clock: clocks
                .and_then(|c| clock_index(c.clock))
                .unwrap_or(boottime),
            reference: clocks
                .and_then(|c| others.iter().position(|o| *o == c.sync_to.file))
                .unwrap_or(0),
            ref_clock: clocks
                .and_then(|c| clock_index(c.sync_to.clock))
                .map_or(if clocks.is_some() { 0 } else { boottime + 1 }, |i| i + 1),
            offset: clocks.map_or_else(String::new, |c| c.offset_ns.to_string()),
        });
        self.preview = None;
        self.message = None;
    }

    /// The manifest the form describes, or what is wrong with it.
    fn edited(&self, form: &Form) -> Result<Manifest, String> {
        let mut m = self.manifest.clone().ok_or("no manifest yet")?;
        let others = self.others(&form.file);
        let entry = m
            .files
            .iter_mut()
            .find(|e| e.path == form.file)
            .ok_or_else(|| format!("{} is not in the manifest", form.file))?;
        let name = form.machine.trim();
        if entry.machines.is_none() {
            entry.machine = (!name.is_empty()).then(|| name.to_string());
        } else if !name.is_empty() {
            return Err(format!(
                "{} names several machines (a machines block): edit them with sextant merge --machines",
                form.file
            ));
        }
        entry.clocks = match form.mode {
            SyncMode::None => None,
            SyncMode::Pin | SyncMode::Relate => {
                let reference = others
                    .get(form.reference)
                    .ok_or("there is no other file to sync to")?;
                let offset = if form.offset.trim().is_empty() {
                    0
                } else {
                    crate::merge::parse_offset(&form.offset).ok_or_else(|| {
                        format!(
                            "{:?} is not an offset (ns, or with a unit: 250ms, -1.5s, 40us)",
                            form.offset
                        )
                    })?
                };
                Some(ClockOverride {
                    clock: (form.mode == SyncMode::Relate)
                        .then(|| CLOCK_NAMES.get(form.clock).map(|c| c.1))
                        .flatten(),
                    machine: None,
                    sync_to: SyncTo {
                        file: reference.clone(),
                        machine: None,
                        clock: form
                            .ref_clock
                            .checked_sub(1)
                            .and_then(|i| CLOCK_NAMES.get(i))
                            .map(|c| c.1),
                    },
                    offset_ns: offset,
                })
            }
        };
        Ok(m)
    }

    /// Keys of the pane outside the form; returns work for the import thread.
    pub fn on_key(&mut self, key: KeyEvent) -> Option<EditCommand> {
        if self.form.is_some() {
            return self.on_form_key(key);
        }
        let n = self.members.len();
        match key.code {
            KeyCode::Left if n > 0 => self.cursor = (self.cursor + n - 1) % n,
            KeyCode::Right if n > 0 => self.cursor = (self.cursor + 1) % n,
            KeyCode::Char('e') | KeyCode::Enter => {
                if let Some(file) = self.members.get(self.cursor).cloned() {
                    self.open(&file);
                }
            }
            KeyCode::Char('u') if !self.applying => match self.undo.pop() {
                Some(m) => {
                    self.applying = true;
                    self.message = Some(Ok("undoing the last edit…".into()));
                    return Some(EditCommand::Apply(m));
                }
                None => self.message = Some(Err("nothing to undo".into())),
            },
            KeyCode::Char('w') => {
                self.message = Some(Ok("writing a new archive…".into()));
                return Some(EditCommand::Write);
            }
            KeyCode::Char('W') => {
                self.message = Some(Ok("writing the manifest…".into()));
                return Some(EditCommand::WriteManifest);
            }
            _ => {}
        }
        None
    }

    fn on_form_key(&mut self, key: KeyEvent) -> Option<EditCommand> {
        // A ready preview: Enter applies it, anything else goes back to the form.
        if let Some(Preview::Ready(m, Ok(_))) = &self.preview {
            if key.code == KeyCode::Enter && !self.applying {
                let m = m.clone();
                self.pending_undo = self.manifest.clone();
                self.applying = true;
                self.form = None;
                self.preview = None;
                self.message = Some(Ok("re-placing every event…".into()));
                return Some(EditCommand::Apply(m));
            }
        }
        let others = self
            .form
            .as_ref()
            .map(|f| self.others(&f.file).len())
            .unwrap_or(0);
        let form = self.form.as_mut()?;
        let cycle = |v: &mut usize, n: usize, forward: bool| {
            if n > 0 {
                *v = if forward {
                    (*v + 1) % n
                } else {
                    (*v + n - 1) % n
                };
            }
        };
        match key.code {
            KeyCode::Esc => {
                if self.preview.take().is_none() {
                    self.form = None;
                }
                return None;
            }
            KeyCode::Up => form.field = step_field(form.mode, form.field, false),
            KeyCode::Down | KeyCode::Tab => form.field = step_field(form.mode, form.field, true),
            KeyCode::Left | KeyCode::Right => {
                let forward = key.code == KeyCode::Right;
                match form.field {
                    1 => {
                        form.mode = match (form.mode, forward) {
                            (SyncMode::None, true) | (SyncMode::Relate, false) => SyncMode::Pin,
                            (SyncMode::Pin, true) | (SyncMode::None, false) => SyncMode::Relate,
                            _ => SyncMode::None,
                        }
                    }
                    2 => cycle(&mut form.clock, CLOCK_NAMES.len(), forward),
                    3 => cycle(&mut form.reference, others, forward),
                    4 => cycle(&mut form.ref_clock, CLOCK_NAMES.len() + 1, forward),
                    _ => {}
                }
            }
            KeyCode::Backspace => match form.field {
                0 => {
                    form.machine.pop();
                }
                5 => {
                    form.offset.pop();
                }
                _ => {}
            },
            KeyCode::Char(c) if !c.is_control() => match form.field {
                0 => form.machine.push(c),
                5 => form.offset.push(c),
                _ => {}
            },
            KeyCode::Enter => {
                let form = form.clone();
                return match self.edited(&form) {
                    Ok(m) => {
                        self.preview = Some(Preview::Waiting(m.clone()));
                        Some(EditCommand::Preview(m))
                    }
                    Err(e) => {
                        self.preview = Some(Preview::Ready(
                            self.manifest.clone().unwrap_or_default(),
                            Err(e),
                        ));
                        None
                    }
                };
            }
            _ => {}
        }
        // Any change makes the last preview stale.
        self.preview = None;
        None
    }

    pub fn on_preview(&mut self, result: Result<Vec<FilePreview>, String>) {
        if let Some(Preview::Waiting(m)) = self.preview.take() {
            self.preview = Some(Preview::Ready(m, result));
        }
    }

    /// An edit (or an undo) was applied.
    pub fn on_applied(&mut self, events: u64, dropped: u64) {
        if let Some(previous) = self.pending_undo.take() {
            self.undo.push(previous);
        }
        self.applying = false;
        self.message = Some(Ok(format!(
            "applied: {events} events placed, {dropped} dropped · u undoes · w writes a new archive"
        )));
    }

    pub fn on_apply_failed(&mut self, message: String) {
        self.pending_undo = None;
        self.applying = false;
        self.message = Some(Err(format!("not applied: {message}")));
    }

    /// The timeline's "same moment" pair: `file`'s slice at `ts` happened when the marked
    /// slice of `marked_file` did, at `marked_ts`. Opens the form on `file` with the offset
    /// that makes them coincide, and asks for its preview. `clockless` files without a sync
    /// are pinned to the marked file's trace-time clock.
    pub fn align(
        &mut self,
        file: &str,
        ts: i64,
        marked_file: &str,
        marked_ts: i64,
        trace_clock: Option<u32>,
        clockless: bool,
    ) -> Option<EditCommand> {
        let delta = marked_ts - ts;
        self.open(file);
        let others = self.others(file);
        let form = self.form.as_mut()?;
        match form.mode {
            SyncMode::Pin | SyncMode::Relate => {
                let old = crate::merge::parse_offset(&form.offset).unwrap_or(0);
                form.offset = (old + delta).to_string();
            }
            SyncMode::None if clockless => {
                form.mode = SyncMode::Pin;
                form.reference = others.iter().position(|o| o == marked_file).unwrap_or(0);
                form.ref_clock = clock_index(trace_clock).map_or(0, |i| i + 1);
                form.offset = delta.to_string();
            }
            SyncMode::None => {
                self.message = Some(Err(format!(
                    "{file} is placed by its own clock snapshots: give it a sync first (e), then align"
                )));
                self.form = None;
                return None;
            }
        }
        form.field = 5;
        let form = form.clone();
        match self.edited(&form) {
            Ok(m) => {
                self.preview = Some(Preview::Waiting(m.clone()));
                Some(EditCommand::Preview(m))
            }
            Err(e) => {
                self.message = Some(Err(e));
                None
            }
        }
    }
}

/// One line saying what the editor can do, or what happened last.
pub fn strip<'a>(state: &EditState, theme: &Theme) -> Line<'a> {
    if let Some(message) = &state.message {
        return match message {
            Ok(m) => Line::styled(format!("  {m}"), theme.ok()),
            Err(e) => Line::styled(format!("  {e}"), theme.error()),
        };
    }
    let Some(file) = state.members.get(state.cursor) else {
        return Line::styled("  (no files to edit)", theme.dim());
    };
    Line::from(vec![
        Span::styled("  edit ◀ ", theme.dim()),
        Span::styled(sanitize(file).into_owned(), theme.title()),
        Span::styled(
            " ▶  ←/→ file · e edit machine and sync · M on two slices (timeline) aligns them · u undo · w write archive · W manifest",
            theme.dim(),
        ),
    ])
}

fn value_line<'a>(
    label: &str,
    value: String,
    focused: bool,
    hint: &str,
    theme: &Theme,
) -> Line<'a> {
    let marker = if focused { "▸ " } else { "  " };
    let value_style = if focused { theme.title() } else { theme.key() };
    Line::from(vec![
        Span::styled(format!("{marker}{label:<10}"), theme.dim()),
        Span::styled(value, value_style),
        Span::styled(format!("  {hint}"), theme.dim()),
    ])
}

fn clock_label(i: usize) -> String {
    CLOCK_NAMES
        .get(i)
        .map_or_else(|| "?".into(), |c| c.0.to_string())
}

/// The form and the preview, over the lower part of the pane.
pub fn draw(frame: &mut Frame, area: Rect, state: &EditState, theme: &Theme) {
    let Some(form) = &state.form else { return };
    let others: Vec<String> = state
        .members
        .iter()
        .filter(|m| **m != form.file)
        .cloned()
        .collect();
    let reference = others
        .get(form.reference)
        .map_or_else(|| "(no other file)".into(), |r| sanitize(r).into_owned());
    let mode = match form.mode {
        SyncMode::None => "none: placed by the default rules".to_string(),
        SyncMode::Pin => "PIN: its own timeline, pinned to the reference".to_string(),
        SyncMode::Relate => "RELATE: one of its clocks, related to the reference".to_string(),
    };
    let ref_clock = match form.ref_clock {
        0 => "the reference file's own timeline".to_string(),
        i => clock_label(i - 1),
    };
    let syncs = form.mode != SyncMode::None;
    let mut lines = vec![
        value_line(
            "machine",
            format!("{}▏", sanitize(&form.machine)),
            form.field == 0,
            "type a name (empty: as the file says)",
            theme,
        ),
        value_line("sync", mode, form.field == 1, "←/→", theme),
    ];
    if form.mode == SyncMode::Relate {
        lines.push(value_line(
            "clock",
            clock_label(form.clock),
            form.field == 2,
            "←/→ this file's clock",
            theme,
        ));
    }
    if syncs {
        lines.push(value_line(
            "sync to",
            reference,
            form.field == 3,
            "←/→",
            theme,
        ));
        lines.push(value_line(
            "ref clock",
            ref_clock,
            form.field == 4,
            "←/→",
            theme,
        ));
        lines.push(value_line(
            "offset",
            format!("{}▏", sanitize(&form.offset)),
            form.field == 5,
            "ns, or 250ms, -1.5s, 40us: the file moves later by it",
            theme,
        ));
    }
    lines.push(Line::raw(""));
    match &state.preview {
        None => lines.push(Line::styled(
            "  Enter previews the edit · ↑/↓ field · Esc closes",
            theme.dim(),
        )),
        Some(Preview::Waiting(_)) => lines.push(Line::styled("  previewing…", theme.dim())),
        Some(Preview::Ready(_, Err(e))) => {
            lines.push(Line::styled(format!("  {}", sanitize(e)), theme.error()));
        }
        Some(Preview::Ready(_, Ok(files))) => {
            lines.push(Line::styled("  Preview", theme.title()));
            for f in files {
                let moves = match f.shift_ns {
                    Some(0) => "does not move".to_string(),
                    Some(s) => format!("moves {}", format::offset(s)),
                    None => "cannot be placed".to_string(),
                };
                let drops = if f.dropped != f.dropped_now {
                    format!("; drops {} (now {})", f.dropped, f.dropped_now)
                } else if f.dropped > 0 {
                    format!("; drops {}", f.dropped)
                } else {
                    String::new()
                };
                let style = if f.dropped > f.dropped_now {
                    theme.error()
                } else if f.shift_ns.is_some_and(|s| s != 0) {
                    theme.key()
                } else {
                    theme.dim()
                };
                lines.push(Line::from(vec![
                    Span::raw("  "),
                    Span::styled(sanitize(&f.file).into_owned(), theme.title()),
                    Span::styled(
                        format!(
                            " on {}: {moves}, {} events{drops}",
                            sanitize(&f.machine),
                            f.events
                        ),
                        style,
                    ),
                ]));
                lines.push(Line::styled(
                    format!("      {}", sanitize(&f.path)),
                    theme.dim(),
                ));
            }
            lines.push(Line::styled(
                "  Enter applies (re-places every event, no re-parse) · Esc edits again",
                theme.ok(),
            ));
        }
    }
    let height = (lines.len() as u16 + 2).min(area.height);
    let popup = Rect {
        x: area.x,
        y: area.y + area.height - height,
        width: area.width,
        height,
    };
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines)
            .block(
                Block::new()
                    .borders(Borders::ALL)
                    .border_style(theme.key())
                    .title(format!(" Edit {} ", sanitize(&form.file))),
            )
            .wrap(Wrap { trim: false }),
        popup,
    );
}
