//! ART's Java heap dumps (`heap_graph`) and process metadata (`art_process_metadata`), as
//! Trace Processor's HeapGraphTracker reads them. A dump spans packets of one sequence
//! (`index` counts them, `continued` says more follow); objects, types, interned field and
//! location names and roots are gathered until its last packet, then the dump is finished:
//! objects (and every object a reference, a root or a class loader names) become rows in
//! the order first named, references rows of their owner's reference set (field names from
//! the object, or from its class and superclasses), roots mark their objects, and a walk
//! from the roots gives reachability and root distance (a Reference's `referent` is not
//! followed); NativeAllocationRegistry sizes are charged to the objects their cleaners
//! free. The rows go to the sink's [`HeapGraphStore`](crate::model::HeapGraphStore); the
//! dump is handed on as [`ProfileSample::HeapGraph`] at its packet's time. An
//! OutOfMemoryError's thread stack becomes a callsite ([`ProfileSample::OomStack`]).

use super::*;
use crate::model::{HeapClassRow, HeapDump, HeapObjectRow, HeapReferenceRow, OomStack};
use std::collections::VecDeque;

/// An object as the dump describes it.
#[derive(Default)]
struct Object {
    defined: bool,
    class: Option<u64>,
    self_size: u64,
    heap_type: i32,
    /// (field name id, referred object id; 0 = none).
    refs: Vec<(Option<u64>, u64)>,
    /// Its field names come from its class (Android S+).
    fields_from_class: bool,
    native_registry_size: Option<i64>,
    root_type: Option<i32>,
}

/// A dump being read.
#[derive(Default)]
struct Dump {
    pid: i64,
    ts: Option<(i64, ClockRef)>,
    heap_size: Option<i64>,
    /// Objects by id, in the order first named.
    order: Vec<u64>,
    /// Objects by id, in the order defined (their references' row order).
    defined: Vec<u64>,
    objects: FxHashMap<u64, Object>,
    types: FxHashMap<u64, protos::HeapGraphType>,
    field_names: FxHashMap<u64, String>,
    location_names: FxHashMap<u64, String>,
    last_object_id: u64,
    heap_type: i32,
}

impl Dump {
    fn object(&mut self, id: u64) -> &mut Object {
        if !self.objects.contains_key(&id) {
            self.order.push(id);
        }
        self.objects.entry(id).or_default()
    }
}

/// Heap dumps being read, per sequence.
#[derive(Default)]
pub(super) struct HeapGraphState {
    dumps: FxHashMap<(MachineId, u32), Dump>,
    prev_index: FxHashMap<(MachineId, u32), u64>,
}

/// `heap_graph_object.root_type` of HeapGraphRoot.Type.
fn root_type_name(t: i32) -> &'static str {
    match t {
        1 => "ROOT_JNI_GLOBAL",
        2 => "ROOT_JNI_LOCAL",
        3 => "ROOT_JAVA_FRAME",
        4 => "ROOT_NATIVE_STACK",
        5 => "ROOT_STICKY_CLASS",
        6 => "ROOT_THREAD_BLOCK",
        7 => "ROOT_MONITOR_USED",
        8 => "ROOT_THREAD_OBJECT",
        9 => "ROOT_INTERNED_STRING",
        10 => "ROOT_FINALIZING",
        11 => "ROOT_DEBUGGER",
        12 => "ROOT_REFERENCE_CLEANUP",
        13 => "ROOT_VM_INTERNAL",
        14 => "ROOT_JNI_MONITOR",
        _ => "ROOT_UNKNOWN",
    }
}

/// `heap_graph_class.kind` of HeapGraphType.Kind.
fn kind_name(k: i32) -> &'static str {
    match k {
        1 => "KIND_NORMAL",
        2 => "KIND_NOREFERENCES",
        3 => "KIND_STRING",
        4 => "KIND_ARRAY",
        5 => "KIND_CLASS",
        6 => "KIND_CLASSLOADER",
        7 => "KIND_DEXCACHE",
        8 => "KIND_SOFT_REFERENCE",
        9 => "KIND_WEAK_REFERENCE",
        10 => "KIND_FINALIZER_REFERENCE",
        11 => "KIND_PHANTOM_REFERENCE",
        _ => "KIND_UNKNOWN",
    }
}

/// `heap_graph_object.heap_type` of HeapGraphObject.HeapType.
fn heap_type_name(t: i32) -> Option<&'static str> {
    Some(match t {
        1 => "HEAP_TYPE_APP",
        2 => "HEAP_TYPE_ZYGOTE",
        3 => "HEAP_TYPE_BOOT_IMAGE",
        _ => return None,
    })
}

/// A Java method as the frame names it: `ret pkg.Class.method(args)` → `pkg.Class.method`.
fn java_method_name(method: &str) -> &str {
    let head = method.split('(').next().unwrap_or(method).trim();
    head.rsplit(' ').next().unwrap_or(head)
}

impl Parser<'_> {
    /// One packet of a heap dump.
    pub(super) fn heap_graph(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: Option<(i64, ClockRef)>,
        g: &protos::HeapGraph,
    ) {
        self.sink.touch();
        let key = (machine, seq_id);
        let pid = i64::from(g.pid.unwrap_or(0));
        let index = g.index.unwrap_or(0);
        let stat_idx = Some(pid);
        let missing = match self.heap_graphs.prev_index.get(&key) {
            Some(&prev) => prev.wrapping_add(1) != index,
            None => index != 0,
        };
        if missing {
            self.sink
                .stat_indexed("heap_graph_missing_packet", stat_idx, machine, 1);
        }
        self.heap_graphs.prev_index.insert(key, index);
        let dump = self.heap_graphs.dumps.entry(key).or_insert_with(|| Dump {
            pid,
            ts,
            ..Dump::default()
        });
        if dump.pid != pid {
            self.sink
                .stat_indexed("heap_graph_malformed_packet", stat_idx, machine, 1);
            return;
        }
        if g.heap_size.is_some() {
            dump.heap_size = g.heap_size.map(|s| s as i64);
        }
        for s in &g.field_names {
            let text = String::from_utf8_lossy(s.str.as_deref().unwrap_or_default());
            dump.field_names
                .insert(s.iid.unwrap_or(0), text.into_owned());
        }
        for s in &g.location_names {
            let text = String::from_utf8_lossy(s.str.as_deref().unwrap_or_default());
            dump.location_names
                .insert(s.iid.unwrap_or(0), text.into_owned());
        }
        for t in &g.types {
            let id = t.id.unwrap_or(0);
            if let Some(loader) = t.classloader_id.filter(|&l| l != 0) {
                dump.object(loader);
            }
            dump.types.insert(id, t.clone());
        }
        for o in &g.objects {
            use protos::heap_graph_object::Identifier;
            let id = match o.identifier {
                Some(Identifier::Id(id)) => id,
                Some(Identifier::IdDelta(d)) => dump.last_object_id.wrapping_add(d),
                None => 0,
            };
            dump.last_object_id = id;
            if let Some(delta) = o.heap_type_delta {
                dump.heap_type += delta;
            }
            let heap_type = dump.heap_type;
            let base = o.reference_field_id_base.unwrap_or(0);
            let mut refs = Vec::with_capacity(o.reference_object_id.len());
            for (i, &owned) in o.reference_object_id.iter().enumerate() {
                let field = o.reference_field_id.get(i).map(|f| f + base);
                refs.push((field, owned));
            }
            let fields_from_class = o.reference_field_id.is_empty();
            if !dump.objects.get(&id).is_some_and(|o| o.defined) {
                dump.defined.push(id);
            }
            let obj = dump.object(id);
            obj.defined = true;
            obj.class = o.type_id;
            obj.self_size = o.self_size.unwrap_or(0);
            obj.heap_type = heap_type;
            obj.native_registry_size = o.native_allocation_registry_size_field;
            obj.fields_from_class = fields_from_class;
            let owned: Vec<u64> = refs.iter().map(|r| r.1).filter(|&o| o != 0).collect();
            obj.refs = refs;
            for owned in owned {
                dump.object(owned);
            }
        }
        for r in &g.roots {
            for &id in &r.object_ids {
                dump.object(id).root_type = Some(r.root_type.unwrap_or(0));
            }
        }
        if !g.continued() {
            self.finish_heap_graph(machine, seq_id);
        }
    }

    /// Dumps still open at the end of the file are finished as they are, and counted.
    pub(super) fn finish_heap_graphs(&mut self) {
        let mut open: Vec<(MachineId, u32)> = self.heap_graphs.dumps.keys().copied().collect();
        open.sort_unstable();
        for (machine, seq_id) in open {
            self.sink.stat("heap_graph_non_finalized_graph", machine, 1);
            self.finish_heap_graph(machine, seq_id);
        }
    }

    /// A complete dump: its rows, and the event placing it.
    fn finish_heap_graph(&mut self, machine: MachineId, seq_id: u32) {
        let Some(dump) = self.heap_graphs.dumps.remove(&(machine, seq_id)) else {
            return;
        };
        self.heap_graphs.prev_index.remove(&(machine, seq_id));
        let store_first = self.sink.heap_graph.objects.len() as u32;
        let dump_id = self.sink.heap_graph.dumps.len() as u32;
        // Rows of the objects, in the order first named.
        let row_of: FxHashMap<u64, u32> = dump
            .order
            .iter()
            .enumerate()
            .map(|(i, &id)| (id, store_first + i as u32))
            .collect();
        // Classes: one row per type of the dump, superclasses and loaders resolved.
        let mut type_ids: Vec<u64> = dump.types.keys().copied().collect();
        type_ids.sort_unstable();
        let class_first = self.sink.heap_graph.classes.len() as u32;
        let class_of: FxHashMap<u64, u32> = type_ids
            .iter()
            .enumerate()
            .map(|(i, &t)| (t, class_first + i as u32))
            .collect();
        for t in &type_ids {
            let ty = &dump.types[t];
            let location = ty
                .location_id
                .and_then(|l| dump.location_names.get(&l))
                .map_or(NULL_STR, |l| self.sink.intern(l));
            let row = HeapClassRow {
                name: self.sink.intern_opt(ty.class_name.as_deref()),
                location,
                superclass: ty.superclass_id.and_then(|s| class_of.get(&s).copied()),
                classloader: ty.classloader_id.and_then(|l| row_of.get(&l).copied()),
                kind: match ty.kind {
                    Some(k) => self.sink.intern(kind_name(k)),
                    None => NULL_STR,
                },
                deobfuscated_name: NULL_STR,
            };
            self.sink.heap_graph.classes.push(row);
        }
        // The reference field ids of a class and its superclasses, in that order.
        let class_fields = |type_id: u64| -> Vec<u64> {
            let mut out = Vec::new();
            let mut at = Some(type_id);
            let mut hops = 0;
            while let Some(t) = at {
                let Some(ty) = dump.types.get(&t) else {
                    break;
                };
                out.extend_from_slice(&ty.reference_field_id);
                at = ty.superclass_id.filter(|&s| s != t);
                hops += 1;
                if hops > 1000 {
                    break;
                }
            }
            out
        };
        let class_name = |type_id: Option<u64>| -> &str {
            type_id
                .and_then(|t| dump.types.get(&t))
                .and_then(|t| t.class_name.as_deref())
                .unwrap_or("")
        };
        // Objects, in the order first named; then references, in the order their owners
        // were defined.
        let n = dump.order.len();
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
        for id in &dump.order {
            let obj = &dump.objects[id];
            let heap_type = heap_type_name(obj.heap_type).map_or(NULL_STR, |h| self.sink.intern(h));
            let root_type = obj
                .root_type
                .map_or(NULL_STR, |r| self.sink.intern(root_type_name(r)));
            // An object of a fixed-size class leaves its size to the class.
            let self_size = if obj.self_size == 0 {
                obj.class
                    .and_then(|t| dump.types.get(&t))
                    .and_then(|t| t.object_size)
                    .unwrap_or(0)
            } else {
                obj.self_size
            };
            self.sink.heap_graph.objects.push(HeapObjectRow {
                dump: dump_id,
                self_size: self_size as i64,
                native_size: 0,
                reference_set: None,
                reachable: false,
                heap_type,
                class: obj.class.and_then(|t| class_of.get(&t).copied()),
                root_type,
                root_distance: -1,
            });
        }
        for id in &dump.defined {
            let obj = &dump.objects[id];
            let owner = row_of[id];
            let i = (owner - store_first) as usize;
            if obj.refs.is_empty() {
                continue;
            }
            let fields = if obj.fields_from_class {
                obj.class.map(class_fields).unwrap_or_default()
            } else {
                Vec::new()
            };
            let reference_set = self.sink.heap_graph.references.len() as u32;
            self.sink.heap_graph.objects[owner as usize].reference_set = Some(reference_set);
            let owner_kind = obj
                .class
                .and_then(|t| dump.types.get(&t))
                .and_then(|t| t.kind)
                .unwrap_or(0);
            for (k, &(field, owned)) in obj.refs.iter().enumerate() {
                let field = if obj.fields_from_class {
                    fields.get(k).copied()
                } else {
                    field
                };
                let text = field
                    .and_then(|f| dump.field_names.get(&f))
                    .map_or("", String::as_str);
                // "<type> <declaring class>.<field>".
                let (type_name, field_name) = match text.split_once(' ') {
                    Some((t, f)) => (t, f),
                    None => ("", text),
                };
                let owned_row = (owned != 0).then(|| row_of.get(&owned).copied()).flatten();
                let is_referent = (8..=11).contains(&owner_kind)
                    && field_name == "java.lang.ref.Reference.referent";
                if let (Some(o), false) = (owned_row, is_referent) {
                    children[i].push(o - store_first);
                }
                let row = HeapReferenceRow {
                    reference_set,
                    owner,
                    owned: owned_row,
                    field_name: self.sink.intern_nonempty(field_name),
                    field_type_name: self.sink.intern_nonempty(type_name),
                    deobfuscated_field_name: NULL_STR,
                };
                self.sink.heap_graph.references.push(row);
            }
        }
        // Reachability and distance from the nearest root.
        let mut queue: VecDeque<u32> = VecDeque::new();
        for (i, id) in dump.order.iter().enumerate() {
            if dump.objects[id].root_type.is_some() {
                let row = &mut self.sink.heap_graph.objects[store_first as usize + i];
                row.reachable = true;
                row.root_distance = 0;
                queue.push_back(i as u32);
            }
        }
        while let Some(i) = queue.pop_front() {
            let d = self.sink.heap_graph.objects[store_first as usize + i as usize].root_distance;
            for &c in &children[i as usize] {
                let row = &mut self.sink.heap_graph.objects[store_first as usize + c as usize];
                if !row.reachable {
                    row.reachable = true;
                    row.root_distance = d + 1;
                    queue.push_back(c);
                }
            }
        }
        // Native sizes: a Cleaner's thunk names the NativeAllocationRegistry whose size the
        // cleaner's referent holds natively.
        let ref_target = |i: usize, suffix: &str| -> Option<usize> {
            let obj = &dump.objects[&dump.order[i]];
            let fields = if obj.fields_from_class {
                obj.class.map(class_fields).unwrap_or_default()
            } else {
                Vec::new()
            };
            obj.refs
                .iter()
                .enumerate()
                .find_map(|(k, &(field, owned))| {
                    let field = if obj.fields_from_class {
                        fields.get(k).copied()
                    } else {
                        field
                    };
                    let text = field.and_then(|f| dump.field_names.get(&f))?;
                    let name = text.split_once(' ').map_or(text.as_str(), |(_, f)| f);
                    if name.ends_with(suffix) && owned != 0 {
                        row_of.get(&owned).map(|&r| (r - store_first) as usize)
                    } else {
                        None
                    }
                })
        };
        for i in 0..n {
            let cls = class_name(dump.objects[&dump.order[i]].class);
            if cls != "sun.misc.Cleaner" && cls != "jdk.internal.ref.Cleaner" {
                continue;
            }
            let Some(referent) = ref_target(i, ".referent") else {
                continue;
            };
            let Some(thunk) = ref_target(i, ".thunk") else {
                continue;
            };
            let Some(registry) = ref_target(thunk, ".this$0") else {
                continue;
            };
            let size = dump.objects[&dump.order[registry]]
                .native_registry_size
                .unwrap_or(0);
            self.sink.heap_graph.objects[store_first as usize + referent].native_size += size;
        }
        let end = self.sink.heap_graph.objects.len() as u32;
        self.sink.heap_graph.dumps.push(HeapDump {
            process: ProcessRef {
                machine,
                pid: dump.pid,
            },
            heap_size: dump.heap_size,
            placed: None,
            objects: (store_first, end),
        });
        if let Some((ts, clock)) = dump.ts {
            let sample = ProfileSample::HeapGraph { dump: dump_id };
            self.sink.push(ts, clock, EventData::Profile(sample));
        }
    }

    /// ART's facts about a process it dumps: an OutOfMemoryError makes its dumps `OOME`
    /// dumps, and the failing thread's Java stack a callsite.
    pub(super) fn art_process_metadata(
        &mut self,
        machine: MachineId,
        ts: Option<(i64, ClockRef)>,
        m: &protos::ArtProcessMetadata,
    ) {
        self.sink.touch();
        let process = ProcessRef {
            machine,
            pid: i64::from(m.pid.unwrap_or(0)),
        };
        let oome = m.oom_error_msg.is_some()
            || m.oom_allocation_size.is_some()
            || m.oom_total_bytes_free.is_some()
            || m.oom_free_bytes_until_oom.is_some()
            || m.oom_thread_java_stack.is_some();
        if oome {
            self.sink.heap_graph.oome_processes.push(process);
        }
        let Some(stack) = &m.oom_thread_java_stack else {
            return;
        };
        if stack.frames.is_empty() {
            return;
        }
        let empty = self.sink.intern("");
        let mapping = self.sink.stack_profile.empty_mapping(empty);
        let mut parent = None;
        for f in stack.frames.iter().rev() {
            let name = java_method_name(f.method_name.as_deref().unwrap_or(""));
            let name = self.sink.intern(name);
            let file = self.sink.intern_opt(f.source_file.as_deref());
            let line = f.line_number.and_then(|l| u32::try_from(l).ok());
            let frame = self
                .sink
                .stack_profile
                .dummy_frame(mapping, name, file, line);
            parent = Some(self.sink.stack_profile.callsite(parent, frame));
        }
        let Some(callsite) = parent else {
            return;
        };
        let id = self.sink.heap_graph.oom_stacks.len() as u32;
        self.sink.heap_graph.oom_stacks.push(OomStack {
            process,
            callsite,
            placed: None,
        });
        if let Some((ts, clock)) = ts {
            let sample = ProfileSample::OomStack { stack: id };
            self.sink.push(ts, clock, EventData::Profile(sample));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_frames_are_named_without_return_type_or_arguments() {
        assert_eq!(
            java_method_name("void com.example.A.f(int, java.lang.String)"),
            "com.example.A.f"
        );
        assert_eq!(
            java_method_name("com.example.A.g(double)"),
            "com.example.A.g"
        );
        assert_eq!(java_method_name("void com.example.A.h"), "com.example.A.h");
    }
}
