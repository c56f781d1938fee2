//! The machines of an import: ids, the raw ids packets and manifests name them by, and the
//! registry that creates their rows lazily in Trace Processor's order. Hands on
//! [`MachineId`]s that every event and row carries.

use std::collections::HashMap;

/// A machine of the import: an index into [`MachineRegistry`], which is also the `machine`
/// row id. Raw ids (embedded in packets, or 2^32 + n for manifest names) live in the registry.
pub type MachineId = u32;
/// The host when the import creates it first (every import without manifest machine names).
pub const HOST_MACHINE: MachineId = 0;
/// No machine: stats and metadata about the whole import (`machine_id` NULL).
pub const NO_MACHINE: MachineId = MachineId::MAX;
/// No file: stats and metadata about the whole import (`trace_id` NULL).
pub const NO_FILE: u32 = u32::MAX;

/// First `raw_id` of machines named by a manifest: outside the 32-bit space of packet ids.
pub const FIRST_MANIFEST_RAW_ID: i64 = 1 << 32;

/// One machine of the import.
#[derive(Clone, Debug, PartialEq)]
pub struct MachineRecord {
    pub raw_id: i64,
    /// The manifest's name (a SystemInfo `machine_name` overrides it).
    pub name: Option<String>,
}

/// The machines of an import, in row order. Rows are created lazily, as Trace Processor does:
/// manifest names first, then the host at its first use, then embedded ids as packets name them.
#[derive(Clone, Debug, Default)]
pub struct MachineRegistry {
    pub records: Vec<MachineRecord>,
    by_raw: HashMap<i64, MachineId>,
    by_name: HashMap<String, MachineId>,
    host: Option<MachineId>,
}

impl MachineRegistry {
    fn add(&mut self, raw_id: i64, name: Option<String>) -> MachineId {
        let id = self.records.len() as MachineId;
        self.records.push(MachineRecord { raw_id, name });
        self.by_raw.insert(raw_id, id);
        id
    }

    /// The machine a manifest names (one row per distinct name).
    pub fn named(&mut self, name: &str) -> MachineId {
        if let Some(&id) = self.by_name.get(name) {
            return id;
        }
        let raw = FIRST_MANIFEST_RAW_ID + self.by_name.len() as i64;
        let id = self.add(raw, Some(name.to_string()));
        self.by_name.insert(name.to_string(), id);
        id
    }

    /// Renames machine `id`; a name another machine has already is refused (its files
    /// would have to be parsed again to move onto that machine).
    pub fn rename(&mut self, id: MachineId, name: &str) -> Result<(), String> {
        if let Some(&other) = self.by_name.get(name) {
            return if other == id {
                Ok(())
            } else {
                Err(format!(
                    "machine {name:?} exists already: moving a file onto another machine needs \
                     it to be imported again (sextant merge --machine FILE={name})"
                ))
            };
        }
        let Some(record) = self.records.get_mut(id as usize) else {
            return Err(format!("no machine {id}"));
        };
        if let Some(old) = record.name.take() {
            self.by_name.remove(&old);
        }
        record.name = Some(name.to_string());
        self.by_name.insert(name.to_string(), id);
        Ok(())
    }

    /// The host machine (raw id 0 unless a remote id was adopted onto it).
    pub fn host(&mut self) -> MachineId {
        if let Some(h) = self.host {
            return h;
        }
        let id = self.add(0, None);
        self.host = Some(id);
        id
    }

    pub fn host_if_created(&self) -> Option<MachineId> {
        self.host
    }

    /// The machine of an id embedded in packets.
    pub fn embedded(&mut self, raw: u32) -> MachineId {
        if raw == 0 {
            return self.host();
        }
        match self.by_raw.get(&i64::from(raw)) {
            Some(&id) => id,
            None => self.add(i64::from(raw), None),
        }
    }

    pub fn has_raw(&self, raw: u32) -> bool {
        self.by_raw.contains_key(&i64::from(raw))
    }

    /// A single-remote-machine trace is adopted onto the host row: the host takes raw id
    /// `raw`. Only while the host row still has raw id 0 and `raw` has no row of its own.
    pub fn adopt_onto_host(&mut self, raw: u32) -> Option<MachineId> {
        let host = self.host();
        let record = &mut self.records[host as usize];
        if record.raw_id != 0 || self.by_raw.contains_key(&i64::from(raw)) {
            return None;
        }
        record.raw_id = i64::from(raw);
        self.by_raw.remove(&0);
        self.by_raw.insert(i64::from(raw), host);
        Some(host)
    }

    pub fn raw_id(&self, id: MachineId) -> i64 {
        self.records.get(id as usize).map_or(0, |r| r.raw_id)
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}
