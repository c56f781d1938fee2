//! The Java heap dump tables (`heap_graph_object`, `heap_graph_class`,
//! `heap_graph_reference`, one `heap_graph` row per dump with why ART took it, and
//! `heap_graph_thread_callsite` for an OutOfMemoryError's thread stack), written whole at
//! the end of the import from the sink's [`HeapGraphStore`](crate::model::HeapGraphStore).

use super::bulk::Table;
use super::writer::TableWriter;
use super::DbError;
use crate::ir::Sink;

impl TableWriter<'_> {
    pub(super) fn heap_graphs(&mut self, sink: &Sink) -> Result<(), DbError> {
        let hg = &sink.heap_graph;
        let s = &sink.strings;
        for (id, c) in hg.classes.iter().enumerate() {
            self.row(Table::HeapGraphClass, |r| {
                r.int(id as i64);
                r.text(s.get(c.name));
                r.text(s.get(c.deobfuscated_name));
                r.text(s.get(c.location));
                r.opt_int(c.superclass);
                r.opt_int(c.classloader);
                r.text(s.get(c.kind));
            })?;
        }
        for (id, o) in hg.objects.iter().enumerate() {
            let placed = hg.dumps.get(o.dump as usize).and_then(|d| d.placed);
            self.row(Table::HeapGraphObject, |r| {
                r.int(id as i64);
                r.opt_int(placed.map(|p| p.0));
                r.opt_int(placed.map(|p| p.1));
                r.int(o.self_size);
                r.int(o.native_size);
                r.opt_int(o.reference_set);
                r.int(o.reachable);
                r.text(s.get(o.heap_type));
                r.opt_int(o.class);
                r.text(s.get(o.root_type));
                r.int(o.root_distance);
            })?;
        }
        for (id, x) in hg.references.iter().enumerate() {
            self.row(Table::HeapGraphReference, |r| {
                r.int(id as i64);
                r.int(x.reference_set);
                r.int(x.owner);
                r.opt_int(x.owned);
                r.text(s.get(x.field_name));
                r.text(s.get(x.field_type_name));
                r.text(s.get(x.deobfuscated_field_name));
            })?;
        }
        for (id, d) in hg.dumps.iter().enumerate() {
            let oome = hg.oome_processes.contains(&d.process);
            self.row(Table::HeapGraph, |r| {
                r.int(id as i64);
                r.opt_int(d.placed.map(|p| p.1));
                r.opt_int(d.placed.map(|p| p.0));
                r.opt_int(d.heap_size);
                r.text(oome.then_some("OOME"));
            })?;
        }
        for (id, st) in hg.oom_stacks.iter().enumerate() {
            self.row(Table::HeapGraphThreadCallsite, |r| {
                r.int(id as i64);
                r.opt_int(st.placed.map(|p| p.1));
                r.opt_int(st.placed.map(|p| p.0));
                r.int(st.callsite);
            })?;
        }
        Ok(())
    }
}
