//! The clock-graph pane's editor: a file's machine name (or a multi-machine file's names
//! per embedded id) and its sync (none, PIN a JSON trace's own timeline, RELATE one of a
//! trace's clocks) to another file's clock or timeline, with an offset. Every edit is
//! previewed — where each file would land, how far it moves, what would be dropped, what
//! the edit implies — before it is applied; applying re-places without parsing again; `u`
//! undoes the last applied edit; `w` writes the files and the manifest as a new archive.
//! The timeline's `M` on two slices of different files ("the same moment") fills in the
//! offset that makes their starts coincide, moving whichever of the two can move.
//!
//! The form offers only what the reader accepts and what moves something: a PIN for a
//! JSON trace, a RELATE for the others. The session checks every edit with the reader's
//! rules before its preview, so what is applied is what a new import of the written
//! archive gives.
//!
//! State and keys here; the import thread does the work ([`EditCommand`]s become importer
//! commands), and [`draw`] shows the strip, the form and the preview.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear};
use ratatui::Frame;

use crate::import::{ManifestPreview, Member};
use crate::manifest::{self, ClockOverride, MachineEntry, Manifest, SyncTo, CLOCK_NAMES};

use super::format;
use super::sanitize::sanitize;
use super::theme::Theme;
use super::wrap;

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
    /// The machine name; for a multi-machine file, `ID:NAME,ID:NAME…`.
    pub machine: String,
    /// The machine field as the form opened (unchanged, it changes nothing).
    pub machine_before: String,
    pub mode: SyncMode,
    /// Index into [`EditState::clock_choices`].
    pub clock: usize,
    /// Index into [`EditState::references`].
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
    Ready(Manifest, Result<ManifestPreview, String>),
}

/// What editing needs that a database opened alone does not have.
pub const NEEDS_TRACES: &str = "editing the merge needs the original trace files: this is a \
    database written by sextant import; open the traces (or their archive) to edit it";

#[derive(Debug, Default)]
pub struct EditState {
    /// The manifest in effect, and the trace files.
    pub manifest: Option<Manifest>,
    pub members: Vec<Member>,
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
    /// The input is a database: there is nothing to edit.
    pub database: bool,
    /// The manifest being applied, to push on the undo stack once it is.
    pending_undo: Option<Manifest>,
    /// The edit being applied is an undo.
    undoing: bool,
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

/// `ID:NAME,ID:NAME…` of a machines list.
fn machines_text(list: &[(u32, String)]) -> String {
    list.iter()
        .map(|(id, name)| format!("{id}:{name}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn parse_machines(text: &str) -> Result<Vec<MachineEntry>, String> {
    let mut out: Vec<MachineEntry> = Vec::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (id, name) = item.split_once(':').ok_or_else(|| {
            format!("{item:?}: a multi-machine file's names are ID:NAME,ID:NAME…")
        })?;
        let id: u32 = id
            .trim()
            .parse()
            .map_err(|_| format!("{id:?}: a machine id is a number in [0, 4294967295]"))?;
        if out.iter().any(|m| m.id == id) {
            return Err(format!("machine id {id} is named twice"));
        }
        out.push(MachineEntry {
            id,
            name: name.trim().to_string(),
        });
    }
    Ok(out)
}

impl EditState {
    pub fn set_manifest(&mut self, manifest: Manifest, members: Vec<Member>) {
        self.manifest = Some(manifest);
        self.members = members;
        self.cursor = self.cursor.min(self.members.len().saturating_sub(1));
    }

    /// The form is open: keys type into it.
    pub fn editing(&self) -> bool {
        self.form.is_some()
    }

    fn member(&self, file: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.name == file)
    }

    /// The machines block of a file in the manifest in effect (a multi-machine file names
    /// each embedded id).
    fn block(&self, file: &str) -> Option<&Vec<MachineEntry>> {
        self.manifest.as_ref()?.entry(file)?.machines.as_ref()
    }

    /// The file is on several machines (its machine field names each).
    fn multi_machine(&self, file: &str) -> bool {
        self.block(file).is_some() || self.member(file).is_some_and(|m| m.machines.len() > 1)
    }

    /// The syncs a file can have: a PIN moves only a JSON trace's own timeline; the other
    /// traces are placed by their clocks, which a RELATE relates. (The mode the manifest
    /// has now is offered too.)
    fn modes(&self, file: &str, current: SyncMode) -> Vec<SyncMode> {
        let json = self.member(file).is_some_and(|m| m.trace_type == "json");
        let mut modes = vec![SyncMode::None];
        if json {
            modes.push(SyncMode::Pin);
        } else {
            modes.push(SyncMode::Relate);
        }
        if !modes.contains(&current) {
            modes.push(current);
        }
        modes
    }

    /// The clocks a RELATE of `file` can relate: with a machines block, each machine's.
    pub fn clock_choices(&self, file: &str) -> Vec<(Option<String>, u32)> {
        let machines: Vec<Option<String>> = match self.block(file) {
            Some(list) => list.iter().map(|m| Some(m.name.clone())).collect(),
            None => vec![None],
        };
        machines
            .into_iter()
            .flat_map(|m| CLOCK_NAMES.iter().map(move |(_, c)| (m.clone(), *c)))
            .collect()
    }

    /// What `file` can sync to: every other file, a multi-machine one per machine its
    /// block names.
    pub fn references(&self, file: &str) -> Vec<(String, Option<String>)> {
        let mut out = Vec::new();
        for m in self.members.iter().filter(|m| m.name != file) {
            match self.block(&m.name) {
                Some(list) => {
                    out.extend(list.iter().map(|x| (m.name.clone(), Some(x.name.clone()))))
                }
                None => out.push((m.name.clone(), None)),
            }
        }
        out
    }

    /// Opens the form on `file`, as the manifest in effect has it.
    pub fn open(&mut self, file: &str) {
        let Some(m) = &self.manifest else { return };
        let entry = m.entry(file);
        let clocks = entry.and_then(|e| e.clocks.as_ref());
        let mode = match clocks {
            None => SyncMode::None,
            Some(c) if c.is_pin() => SyncMode::Pin,
            Some(_) => SyncMode::Relate,
        };
        let boottime = clock_index(manifest::clock_id("BOOTTIME")).unwrap_or(0);
        let machine = if self.multi_machine(file) {
            match self.block(file) {
                Some(list) => machines_text(
                    &list
                        .iter()
                        .map(|x| (x.id, x.name.clone()))
                        .collect::<Vec<_>>(),
                ),
                None => self
                    .member(file)
                    .map(|m| machines_text(&m.machines))
                    .unwrap_or_default(),
            }
        } else {
            entry.and_then(|e| e.machine.clone()).unwrap_or_default()
        };
        let references = self.references(file);
        let choices = self.clock_choices(file);
        let form = Form {
            file: file.to_string(),
            field: 0,
            machine_before: machine.clone(),
            machine,
            mode,
            clock: clocks
                .and_then(|c| {
                    choices
                        .iter()
                        .position(|(m, id)| Some(*id) == c.clock && *m == c.machine)
                })
                .or_else(|| {
                    choices
                        .iter()
                        .position(|(_, id)| *id == CLOCK_NAMES[boottime].1)
                })
                .unwrap_or(0),
            reference: clocks
                .and_then(|c| {
                    references
                        .iter()
                        .position(|(f, m)| *f == c.sync_to.file && *m == c.sync_to.machine)
                        .or_else(|| references.iter().position(|(f, _)| *f == c.sync_to.file))
                })
                .unwrap_or(0),
            ref_clock: clocks
                .and_then(|c| clock_index(c.sync_to.clock))
                .map_or(if clocks.is_some() { 0 } else { boottime + 1 }, |i| i + 1),
            offset: clocks.map_or_else(String::new, |c| c.offset_ns.to_string()),
        };
        if let Some(i) = self.members.iter().position(|m| m.name == file) {
            self.cursor = i;
        }
        self.form = Some(form);
        self.preview = None;
        self.message = None;
    }

    /// The manifest the form describes, or what is wrong with it.
    fn edited(&self, form: &Form) -> Result<Manifest, String> {
        let mut m = self.manifest.clone().ok_or("no manifest yet")?;
        let references = self.references(&form.file);
        let choices = self.clock_choices(&form.file);
        let multi = self.multi_machine(&form.file);
        let entry = m
            .files
            .iter_mut()
            .find(|e| e.path == form.file)
            .ok_or_else(|| format!("{} is not in the manifest", form.file))?;
        if form.machine != form.machine_before {
            if multi {
                let list = parse_machines(&form.machine)?;
                entry.machine = None;
                entry.machines = (!list.is_empty()).then_some(list);
            } else {
                let name = form.machine.trim();
                entry.machine = (!name.is_empty()).then(|| name.to_string());
            }
        }
        entry.clocks = match form.mode {
            SyncMode::None => None,
            SyncMode::Pin | SyncMode::Relate => {
                let (file, machine) = references
                    .get(form.reference)
                    .cloned()
                    .ok_or("there is no other file to sync to")?;
                let offset = if form.offset.trim().is_empty() {
                    0
                } else {
                    crate::merge::parse_offset(&form.offset)?
                };
                let (source_machine, source_clock) = match form.mode {
                    SyncMode::Relate => choices
                        .get(form.clock)
                        .cloned()
                        .map_or((None, None), |(m, c)| (m, Some(c))),
                    _ => (None, None),
                };
                Some(ClockOverride {
                    clock: source_clock,
                    machine: source_machine,
                    sync_to: SyncTo {
                        file,
                        machine,
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
        let wants_session = matches!(
            key.code,
            KeyCode::Char('e' | 'u' | 'w' | 'W') | KeyCode::Enter
        );
        if self.database && wants_session {
            self.message = Some(Err(NEEDS_TRACES.into()));
            return None;
        }
        match key.code {
            KeyCode::Left if n > 0 => {
                self.cursor = (self.cursor + n - 1) % n;
                self.message = None;
            }
            KeyCode::Right if n > 0 => {
                self.cursor = (self.cursor + 1) % n;
                self.message = None;
            }
            KeyCode::Char('e') | KeyCode::Enter => {
                if let Some(file) = self.members.get(self.cursor).map(|m| m.name.clone()) {
                    self.open(&file);
                }
            }
            KeyCode::Char('u') if !self.applying => match self.undo.pop() {
                Some(m) => {
                    self.applying = true;
                    self.undoing = true;
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
        // A ready preview: Enter applies it (as the session normalized it), anything else
        // goes back to the form.
        if let Some(Preview::Ready(_, Ok(p))) = &self.preview {
            if key.code == KeyCode::Enter && !self.applying {
                let m = p.manifest.clone();
                self.pending_undo = self.manifest.clone();
                self.applying = true;
                self.undoing = false;
                self.form = None;
                self.preview = None;
                self.message = Some(Ok("re-placing every event…".into()));
                return Some(EditCommand::Apply(m));
            }
        }
        let file = self.form.as_ref()?.file.clone();
        let references = self.references(&file).len();
        let choices = self.clock_choices(&file).len();
        let modes = self.modes(&file, self.form.as_ref()?.mode);
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
                        let mut i = modes.iter().position(|m| *m == form.mode).unwrap_or(0);
                        cycle(&mut i, modes.len(), forward);
                        form.mode = modes[i];
                    }
                    2 => cycle(&mut form.clock, choices, forward),
                    3 => cycle(&mut form.reference, references, forward),
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

    pub fn on_preview(&mut self, result: Result<ManifestPreview, String>) {
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
        let what = if std::mem::take(&mut self.undoing) {
            "undone: the manifest before the last edit is in effect again"
        } else {
            "applied"
        };
        let more = if self.undo.is_empty() {
            ""
        } else {
            " · u undoes"
        };
        self.message = Some(Ok(format!(
            "{what}: {events} events placed, {dropped} dropped{more} · w writes a new archive"
        )));
    }

    pub fn on_apply_failed(&mut self, message: String) {
        self.pending_undo = None;
        self.applying = false;
        self.undoing = false;
        self.message = Some(Err(format!("not applied: {message}")));
    }

    /// Whether aligning can move `file`: it has a sync whose offset can change, or it is a
    /// JSON trace that a PIN places.
    fn can_move(&self, file: &str) -> bool {
        let synced = self
            .manifest
            .as_ref()
            .and_then(|m| m.entry(file))
            .is_some_and(|e| e.clocks.is_some());
        synced || self.member(file).is_some_and(|m| m.trace_type == "json")
    }

    /// The timeline's "same moment" pair: `file`'s slice at `ts` happened when the marked
    /// slice of `marked_file` did, at `marked_ts`. Opens the form on whichever of the two
    /// can move (this one first) with the offset that makes them coincide, and asks for its
    /// preview. A JSON trace without a sync is pinned to the other file's `trace_clock`.
    /// `Err` says why neither can move.
    pub fn align(
        &mut self,
        file: &str,
        ts: i64,
        marked_file: &str,
        marked_ts: i64,
        trace_clock: Option<u32>,
    ) -> Result<Option<EditCommand>, String> {
        if self.database || self.manifest.is_none() {
            return Err(NEEDS_TRACES.into());
        }
        let (file, ts, other, other_ts) = if self.can_move(file) {
            (file, ts, marked_file, marked_ts)
        } else if self.can_move(marked_file) {
            (marked_file, marked_ts, file, ts)
        } else {
            return Err(format!(
                "neither {file} nor {marked_file} can move (both placed by their own clocks); \
                 sync one (2, e) first"
            ));
        };
        let delta = other_ts - ts;
        self.open(file);
        let references = self.references(file);
        let form = self.form.as_mut().ok_or("no form")?;
        match form.mode {
            SyncMode::Pin | SyncMode::Relate => {
                let old = crate::merge::parse_offset(&form.offset).unwrap_or(0);
                form.offset = old.saturating_add(delta).to_string();
            }
            SyncMode::None => {
                form.mode = SyncMode::Pin;
                form.reference = references.iter().position(|(f, _)| f == other).unwrap_or(0);
                form.ref_clock = clock_index(trace_clock).map_or(0, |i| i + 1);
                form.offset = delta.to_string();
            }
        }
        form.field = 5;
        let form = form.clone();
        match self.edited(&form) {
            Ok(m) => {
                self.preview = Some(Preview::Waiting(m.clone()));
                Ok(Some(EditCommand::Preview(m)))
            }
            Err(e) => {
                self.form = None;
                Err(e)
            }
        }
    }
}

/// What the strip says: what the editor can do, or what happened last.
pub fn strip<'a>(state: &EditState, theme: &Theme) -> Line<'a> {
    if let Some(message) = &state.message {
        return match message {
            Ok(m) => Line::styled(format!("  {m}"), theme.ok()),
            Err(e) => Line::styled(format!("  {e}"), theme.error()),
        };
    }
    if state.database {
        return Line::styled(format!("  {NEEDS_TRACES}"), theme.dim());
    }
    let Some(file) = state.members.get(state.cursor) else {
        return Line::styled("  (no files to edit)", theme.dim());
    };
    Line::from(vec![
        Span::styled("  edit ◀ ", theme.dim()),
        Span::styled(sanitize(&file.name).into_owned(), theme.title()),
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
    let mut spans = vec![
        Span::styled(format!("{marker}{label:<10}"), theme.dim()),
        Span::styled(value, value_style),
    ];
    if !hint.is_empty() {
        spans.push(Span::styled(format!("  {hint}"), theme.dim()));
    }
    Line::from(spans)
}

fn clock_label(i: usize) -> String {
    CLOCK_NAMES
        .get(i)
        .map_or_else(|| "?".into(), |c| c.0.to_string())
}

/// The form and the preview, over the lower part of the pane.
pub fn draw(frame: &mut Frame, area: Rect, state: &EditState, theme: &Theme) {
    let Some(form) = &state.form else { return };
    let references = state.references(&form.file);
    let reference = references.get(form.reference).map_or_else(
        || "(no other file)".into(),
        |(f, m)| match m {
            Some(m) => format!("{} (machine {})", sanitize(f), sanitize(m)),
            None => sanitize(f).into_owned(),
        },
    );
    let json = state
        .member(&form.file)
        .is_some_and(|m| m.trace_type == "json");
    let mode = match form.mode {
        SyncMode::None => "none: placed by the default rules".to_string(),
        SyncMode::Pin => "PIN: its own timeline, pinned to the reference".to_string(),
        SyncMode::Relate => "RELATE: one of its clocks, related to the reference".to_string(),
    };
    let mode_hint = if json {
        "←/→ (a JSON trace: its own timeline is what moves)"
    } else {
        "←/→ (placed by its clocks: relate one)"
    };
    let ref_clock = match form.ref_clock {
        0 => "the reference file's own timeline".to_string(),
        i => clock_label(i - 1),
    };
    let choice = state.clock_choices(&form.file).get(form.clock).cloned();
    let clock = match choice {
        Some((Some(m), c)) => format!(
            "{} on {}",
            manifest::clock_name(c).unwrap_or("?"),
            sanitize(&m)
        ),
        Some((None, c)) => manifest::clock_name(c).unwrap_or("?").to_string(),
        None => "?".into(),
    };
    let multi = state.multi_machine(&form.file);
    let syncs = form.mode != SyncMode::None;
    let mut lines = vec![
        value_line(
            if multi { "machines" } else { "machine" },
            format!("{}▏", sanitize(&form.machine)),
            form.field == 0,
            if multi {
                "ID:NAME,… per embedded machine id"
            } else {
                "type a name (renames the machine for every file on it)"
            },
            theme,
        ),
        value_line("sync", mode, form.field == 1, mode_hint, theme),
    ];
    if form.mode == SyncMode::Relate {
        lines.push(value_line(
            "clock",
            clock,
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
            lines.push(Line::styled(
                format!("  cannot apply: {}", sanitize(e)),
                theme.error(),
            ));
            lines.push(Line::styled("  Esc edits again", theme.dim()));
        }
        Some(Preview::Ready(_, Ok(p))) => {
            // The keys first: they must stay on screen however long the list is.
            lines.push(Line::from(vec![
                Span::styled("  Preview", theme.title()),
                Span::styled(
                    " · Enter applies (re-places every event, no re-parse) · Esc edits again",
                    theme.ok(),
                ),
            ]));
            for note in &p.notes {
                lines.push(Line::styled(
                    format!("  note: {}", sanitize(note)),
                    theme.key(),
                ));
            }
            for f in &p.files {
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
        }
    }
    let inner_width = area.width.saturating_sub(2);
    let lines = wrap::wrap_lines(&lines, usize::from(inner_width), 4);
    let height = (lines.len() as u16 + 2).min(area.height);
    let popup = Rect {
        x: area.x,
        y: area.y + area.height - height,
        width: area.width,
        height,
    };
    frame.render_widget(Clear, popup);
    frame.render_widget(
        ratatui::widgets::Paragraph::new(lines).block(
            Block::new()
                .borders(Borders::ALL)
                .border_style(theme.key())
                .title(format!(" Edit {} ", sanitize(&form.file))),
        ),
        popup,
    );
}
