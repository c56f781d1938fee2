//! V8 CPU profiles in Chrome JSON (`P` events, as DevTools and Lighthouse write them), as
//! Trace Processor's legacy V8 CPU profile tracker reads them: a `Profile` event starts a
//! session (`id`, per pid) at `args.data.startTime`; each `ProfileChunk` adds call tree nodes
//! (`cpuProfile.nodes`: id, parent, callFrame) and samples (`cpuProfile.samples`, node ids,
//! with `timeDeltas` in µs from the previous sample). Nodes become callsites of frames named
//! after their function (a frame per function and script URL); samples become
//! `cpu_profile_stack_sample` events on the chunk's thread. Read in file order, before the
//! sort, as the reference's tokenizer does. A node whose session or parent is unknown is
//! counted in `legacy_v8_cpu_profile_invalid_callsite`, a sample without its session or node
//! in `legacy_v8_cpu_profile_invalid_sample`.

use super::*;
use crate::ir::{FxHashMap, ProfileSample};
use crate::model::MappingRow;

/// One profile: (id, pid).
#[derive(Default)]
struct Session {
    /// Time of the last sample (ns on the file's timeline).
    ts: i64,
    /// The session's node ids → callsites.
    nodes: FxHashMap<u64, u32>,
}

#[derive(Default)]
pub(super) struct V8Profiles {
    sessions: FxHashMap<(u64, i64), Session>,
    /// The mapping every V8 frame is in (made at the first node).
    mapping: Option<u32>,
}

/// A profile id: a hex string (`"0x7b"`) or an integer.
fn session_id(v: &JVal) -> Option<u64> {
    match v {
        JVal::Str(s) => {
            let hex = s.strip_prefix("0x").or(s.strip_prefix("0X")).unwrap_or(s);
            u64::from_str_radix(hex, 16).ok()
        }
        JVal::Int(i) => u64::try_from(*i).ok(),
        JVal::UInt(u) => Some(*u),
        _ => None,
    }
}

fn uint(v: Option<&JVal>) -> Option<u64> {
    match v? {
        JVal::Int(i) => u64::try_from(*i).ok(),
        JVal::UInt(u) => Some(*u),
        JVal::Real(f) if f.fract() == 0.0 && *f >= 0.0 => Some(*f as u64),
        _ => None,
    }
}

fn int(v: &JVal) -> Option<i64> {
    match v {
        JVal::Int(i) => Some(*i),
        JVal::UInt(u) => i64::try_from(*u).ok(),
        JVal::Real(f) if f.is_finite() => Some(*f as i64),
        _ => None,
    }
}

impl Importer {
    /// A `P` event: a profile's start or a chunk of its nodes and samples.
    pub(super) fn v8_sample_event(&mut self, sink: &mut Sink, ev: &RawEvent, thread: ThreadRef) {
        let Some(id) = ev.id.as_ref().and_then(session_id) else {
            return;
        };
        let pid = thread.pid.unwrap_or(0);
        let data = ev.args.as_ref().and_then(|a| a.get("data"));
        match ev.name() {
            "Profile" => {
                let start = data
                    .and_then(|d| d.get("startTime"))
                    .and_then(us_to_ns)
                    .or_else(|| ev.ts.as_ref().and_then(us_to_ns))
                    .unwrap_or(0);
                self.v8.sessions.entry((id, pid)).or_default().ts = start;
            }
            "ProfileChunk" => {
                let Some(data) = data else {
                    return;
                };
                let profile = data.get("cpuProfile");
                if let Some(JVal::Arr(nodes)) = profile.and_then(|p| p.get("nodes")) {
                    for node in nodes {
                        self.v8_node(sink, id, pid, node);
                    }
                }
                let samples = match profile.and_then(|p| p.get("samples")) {
                    Some(JVal::Arr(s)) => &s[..],
                    _ => &[],
                };
                let deltas = match data.get("timeDeltas") {
                    Some(JVal::Arr(d)) => &d[..],
                    _ => &[],
                };
                for (i, sample) in samples.iter().enumerate() {
                    let delta = deltas.get(i).and_then(us_to_ns);
                    self.v8_sample(sink, id, thread, uint(Some(sample)), delta);
                }
            }
            _ => {}
        }
    }

    fn v8_node(&mut self, sink: &mut Sink, id: u64, pid: i64, node: &JVal) {
        let Some(session) = self.v8.sessions.get(&(id, pid)) else {
            self.stat(sink, "legacy_v8_cpu_profile_invalid_callsite");
            return;
        };
        let Some(node_id) = uint(node.get("id")) else {
            self.stat(sink, "legacy_v8_cpu_profile_invalid_callsite");
            return;
        };
        let parent = match node.get("parent") {
            None | Some(JVal::Null) => None,
            Some(p) => match uint(Some(p)).and_then(|p| session.nodes.get(&p)) {
                Some(&callsite) => Some(callsite),
                None => {
                    self.stat(sink, "legacy_v8_cpu_profile_invalid_callsite");
                    return;
                }
            },
        };
        let frame = node.get("callFrame");
        let text = |key: &str| {
            frame
                .and_then(|f| f.get(key))
                .and_then(JVal::as_str)
                .unwrap_or("")
        };
        let name = sink.intern(text("functionName"));
        let url = sink.intern_nonempty(text("url"));
        let line = frame
            .and_then(|f| f.get("lineNumber"))
            .and_then(int)
            .and_then(|l| u32::try_from(l).ok());
        let mapping = match self.v8.mapping {
            Some(m) => m,
            None => {
                let empty = sink.intern("");
                let m = sink.stack_profile.mapping(MappingRow {
                    build_id: empty,
                    exact_offset: 0,
                    start_offset: 0,
                    start: 0,
                    end: 0,
                    load_bias: 0,
                    name: empty,
                });
                self.v8.mapping = Some(m);
                m
            }
        };
        let frame = sink.stack_profile.dummy_frame(mapping, name, url, line);
        let callsite = sink.stack_profile.callsite(parent, frame);
        if let Some(session) = self.v8.sessions.get_mut(&(id, pid)) {
            session.nodes.insert(node_id, callsite);
        }
    }

    fn v8_sample(
        &mut self,
        sink: &mut Sink,
        id: u64,
        thread: ThreadRef,
        node: Option<u64>,
        delta: Option<i64>,
    ) {
        let pid = thread.pid.unwrap_or(0);
        let Some(session) = self.v8.sessions.get_mut(&(id, pid)) else {
            self.stat(sink, "legacy_v8_cpu_profile_invalid_sample");
            return;
        };
        session.ts = session.ts.saturating_add(delta.unwrap_or(0));
        let ts = session.ts;
        let Some(&callsite) = node.and_then(|n| session.nodes.get(&n)) else {
            self.stat(sink, "legacy_v8_cpu_profile_invalid_sample");
            return;
        };
        let sample = ProfileSample::Cpu {
            thread,
            callsite,
            process_priority: 0,
        };
        self.push(ts, b'P', 0, EventData::Profile(sample));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn import(json: &str) -> Sink {
        let mut sink = Sink::new();
        let ctx = FileContext::new(0, 0);
        parse(json.as_bytes(), &mut sink, &ctx).expect("parses");
        sink
    }

    fn samples(sink: &Sink) -> Vec<(i64, u32)> {
        sink.decoded()
            .into_iter()
            .filter_map(|e| match e.data {
                EventData::Profile(ProfileSample::Cpu { callsite, .. }) => Some((e.ts, callsite)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn chunks_make_callsites_and_samples_from_the_profile_start() {
        let sink = import(
            r#"[
            {"ph":"P","name":"Profile","id":"0x2","pid":1,"tid":2,"ts":5,
             "args":{"data":{"startTime":100}}},
            {"ph":"P","name":"ProfileChunk","id":"0x2","pid":1,"tid":3,"ts":200,
             "args":{"data":{"cpuProfile":{"nodes":[
                {"id":1,"callFrame":{"functionName":"(root)"}},
                {"id":2,"parent":1,"callFrame":{"functionName":"main","url":"a.js"}}],
               "samples":[2,1,9]},"timeDeltas":[10,5,1]}}},
            {"ph":"P","name":"ProfileChunk","id":"0x3","pid":1,"tid":3,"ts":300,
             "args":{"data":{"cpuProfile":{"nodes":[{"id":1,"callFrame":{}}],
               "samples":[1]},"timeDeltas":[1]}}},
            {"ph":"P","name":"ProfileChunk","id":"0x2","pid":1,"tid":3,"ts":400,"args":{}}
            ]"#,
        );
        assert_eq!(samples(&sink), vec![(110_000, 1), (115_000, 0)]);
        let sp = &sink.stack_profile;
        assert_eq!(sp.callsites.len(), 2);
        assert_eq!(sp.callsites[1].parent, Some(0));
        assert_eq!(sp.callsites[1].depth, 1);
        let frame = sp.frames[sp.callsites[1].frame as usize];
        assert_eq!(sink.strings.get(frame.name), Some("main"));
        // Node 9 is unknown; profile 0x3 never started.
        assert_eq!(sink.stat_total("legacy_v8_cpu_profile_invalid_sample"), 2);
        assert_eq!(sink.stat_total("legacy_v8_cpu_profile_invalid_callsite"), 1);
    }

    #[test]
    fn a_node_whose_parent_is_unknown_is_invalid_and_so_are_its_children() {
        let sink = import(
            r#"[
            {"ph":"P","name":"Profile","id":7,"pid":1,"tid":2,"ts":5,"args":{"data":{"startTime":0}}},
            {"ph":"P","name":"ProfileChunk","id":7,"pid":1,"tid":2,"ts":6,
             "args":{"data":{"cpuProfile":{"nodes":[
                {"id":5,"parent":4,"callFrame":{"functionName":"a"}},
                {"id":6,"parent":5,"callFrame":{"functionName":"b"}}],
               "samples":[6]},"timeDeltas":[1]}}}
            ]"#,
        );
        assert_eq!(sink.stat_total("legacy_v8_cpu_profile_invalid_callsite"), 2);
        assert_eq!(sink.stat_total("legacy_v8_cpu_profile_invalid_sample"), 1);
        assert!(samples(&sink).is_empty());
    }
}
