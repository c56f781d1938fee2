//! TrackDescriptor facts as the proto parser registers them (file order), shared by the
//! parser (which resolves events' tracks against the descriptors read so far) and the
//! model (which builds the tracks): the descriptor record and the parent-chain check.

use super::*;

/// TrackDescriptor facts (proto), registered in file order.
#[derive(Clone, Debug, Default)]
pub struct Descriptor {
    pub uuid: u64,
    pub parent_uuid: Option<u64>,
    pub name: StrId,
    pub process: Option<ProcessRef>,
    pub thread: Option<ThreadRef>,
    pub counter: Option<CounterInfo>,
    /// A state track: its TYPE_STATE events go to the `state` table.
    pub is_state: bool,
    pub disallow_merging_with_system_tracks: bool,
    pub description: StrId,
    /// `child_ordering` enum (1 lexicographic, 2 chronological, 3 explicit).
    pub child_ordering: i32,
    pub sibling_order_rank: Option<i32>,
    /// The describing sequence had `first_packet_on_sequence`.
    pub has_first_packet_on_sequence: bool,
    /// `sibling_merge_behavior` enum (0 unspecified / 1 by name, 2 none, 3 by key).
    pub sibling_merge_behavior: i32,
    pub sibling_merge_key: Option<MergeKeyValue>,
}

/// A TrackDescriptor's `sibling_merge_key` (string or int).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MergeKeyValue {
    Str(StrId),
    Int(u64),
}

#[derive(Clone, Copy, Debug, Default)]
pub struct CounterInfo {
    /// Builtin counter type (1 thread time, 2 instruction count).
    pub builtin: i32,
    /// `unit` enum: 1 time ns, 2 count, 3 bytes.
    pub unit: i32,
    pub unit_name: StrId,
    pub unit_multiplier: i64,
    pub is_incremental: bool,
    /// The first of the descriptor's `categories` (track arg `category`), or NULL.
    pub category: StrId,
}

/// The deepest descriptor hierarchy resolved: a longer parent chain is treated like a loop.
/// (Real traces nest a few levels; the bound keeps resolution, which recurses through the
/// ancestors, within the stack on hostile input.)
pub const MAX_TRACK_HIERARCHY_DEPTH: usize = 256;

/// Whether the parent chain of `uuid` runs into a loop (a descriptor that is its own
/// ancestor, or a child of such a one): Trace Processor's track resolution detects this
/// ("input data may contain loops or self-loops") and fails, so such a track never
/// resolves. A chain deeper than [`MAX_TRACK_HIERARCHY_DEPTH`] counts as one (a loop is
/// exactly a chain that never ends). A chain that ends at an undescribed parent is not.
pub fn descriptor_chain_loops(
    descriptors: &FxHashMap<(MachineId, u64), Descriptor>,
    machine: MachineId,
    uuid: u64,
) -> bool {
    let mut current = uuid;
    for _ in 0..=MAX_TRACK_HIERARCHY_DEPTH {
        match descriptors
            .get(&(machine, current))
            .and_then(|d| d.parent_uuid)
        {
            None | Some(0) => return false,
            Some(parent) => current = parent,
        }
    }
    true
}

/// Which stat an unresolvable parent chain counts in: `track_event_track_hierarchy_loop`
/// when some descriptor of it is its own ancestor, `track_event_track_hierarchy_too_deep`
/// when it only runs deeper than [`MAX_TRACK_HIERARCHY_DEPTH`]. Call it for a chain
/// [`descriptor_chain_loops`] refused.
pub fn descriptor_chain_fault(
    descriptors: &FxHashMap<(MachineId, u64), Descriptor>,
    machine: MachineId,
    uuid: u64,
) -> &'static str {
    let mut seen = std::collections::HashSet::new();
    let mut current = uuid;
    while seen.insert(current) {
        match descriptors
            .get(&(machine, current))
            .and_then(|d| d.parent_uuid)
        {
            None | Some(0) => break,
            Some(parent) => current = parent,
        }
        if seen.len() > MAX_TRACK_HIERARCHY_DEPTH + 1 {
            return "track_event_track_hierarchy_too_deep";
        }
    }
    if seen.contains(&current)
        && descriptors
            .get(&(machine, current))
            .and_then(|d| d.parent_uuid)
            .is_some_and(|p| p != 0)
    {
        "track_event_track_hierarchy_loop"
    } else {
        "track_event_track_hierarchy_too_deep"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(links: &[(u64, u64)]) -> FxHashMap<(MachineId, u64), Descriptor> {
        links
            .iter()
            .map(|&(uuid, parent)| {
                let d = Descriptor {
                    uuid,
                    parent_uuid: Some(parent),
                    ..Default::default()
                };
                ((0, uuid), d)
            })
            .collect()
    }

    /// A parent loop and a chain that is only too deep are told apart (behaviour-stats.md
    /// §6 keys 328, 329).
    #[test]
    fn unresolvable_chains_name_their_fault() {
        // 1 → 2 → 3 → 2: 1 sits under a loop.
        let looping = chain(&[(1, 2), (2, 3), (3, 2)]);
        assert!(descriptor_chain_loops(&looping, 0, 1));
        assert_eq!(
            descriptor_chain_fault(&looping, 0, 1),
            "track_event_track_hierarchy_loop"
        );
        let n = MAX_TRACK_HIERARCHY_DEPTH as u64 + 5;
        let links: Vec<(u64, u64)> = (1..n).map(|u| (u, u + 1)).collect();
        let deep = chain(&links);
        assert!(descriptor_chain_loops(&deep, 0, 1));
        assert_eq!(
            descriptor_chain_fault(&deep, 0, 1),
            "track_event_track_hierarchy_too_deep"
        );
        assert!(!descriptor_chain_loops(&deep, 0, 10));
    }
}
