//! Android network traces (the `android.network_packets` data source): `network_packet`,
//! `network_packet_bundle` and the interned `packet_context`, as Trace Processor's
//! NetworkTraceModule reads them. Every packet — or aggregate of packets — is a slice on the
//! async tracks of its interface and direction (`wlan0 Transmitted`, `wlan0 Received`), in
//! the first free lane, named by the package of its uid (`uid=<uid>` when no package is
//! listed for it), with the packet's fields as args: `packet_length`, `packet_count`,
//! `packet_transport` (`IPPROTO_TCP`, …), `packet_tcp_flags`, `socket_tag` (hex),
//! `socket_uid`, and `local_port`, `remote_port`, `packet_icmp_type`, `packet_icmp_code`
//! when the packet has them. A bundle of single packets is one slice per packet, at the
//! bundle's time plus the packet's offset; an aggregate bundle (`total_length`) is one slice
//! lasting `total_duration`. A bundle whose interned context is unknown is dropped and
//! counted (`network_trace_intern_errors`); one whose lists of timestamps and lengths differ
//! in length keeps the packets that pair up and is counted (`network_trace_parse_errors`).
//!
//! Hands on [`EventData::NetworkPacket`] events, which the model names from the packages
//! list (it may come later in the file).

use super::*;

/// Android's per-user uid range: a uid is `user * 100000 + app id`, and the packages list
/// names apps by their app id.
const PER_USER_RANGE: u32 = 100_000;

/// IP protocol numbers that have a name of their own.
fn transport_name(ip_proto: u32) -> Option<&'static str> {
    match ip_proto {
        1 => Some("IPPROTO_ICMP"),
        6 => Some("IPPROTO_TCP"),
        17 => Some("IPPROTO_UDP"),
        58 => Some("IPPROTO_ICMPV6"),
        _ => None,
    }
}

/// What one slice is made of: the packet's context, and its length and count.
struct Packet<'a> {
    ctx: &'a protos::NetworkPacketEvent,
    length: i64,
    count: i64,
    dur: i64,
}

impl Parser<'_> {
    /// `network_packet`: one packet, an instant-length slice.
    pub(super) fn network_packet(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        ev: &protos::NetworkPacketEvent,
    ) {
        let packet = Packet {
            ctx: ev,
            length: i64::from(ev.length.unwrap_or(0)),
            count: 1,
            dur: 0,
        };
        self.network_slice(machine, ts, clock, &packet);
    }

    /// `network_packet_bundle`: packets sharing one context, listed one by one or summed.
    pub(super) fn network_packet_bundle(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: i64,
        clock: ClockRef,
        bundle: &protos::NetworkPacketBundle,
    ) {
        use protos::network_packet_bundle::PacketContext;
        let ctx = match &bundle.packet_context {
            Some(PacketContext::Ctx(ctx)) => ctx.clone(),
            Some(PacketContext::Iid(iid)) => {
                let interned = self
                    .sequences
                    .get(&(machine, seq_id))
                    .and_then(|seq| seq.packet_contexts.get(iid))
                    .cloned();
                match interned {
                    Some(ctx) => ctx,
                    None => {
                        self.sink.stat("network_trace_intern_errors", machine, 1);
                        return;
                    }
                }
            }
            None => protos::NetworkPacketEvent::default(),
        };
        if bundle.total_length.is_some() {
            let packet = Packet {
                ctx: &ctx,
                length: i64::try_from(bundle.total_length.unwrap_or(0)).unwrap_or(i64::MAX),
                count: i64::from(bundle.total_packets.unwrap_or(0)),
                dur: i64::try_from(bundle.total_duration.unwrap_or(0)).unwrap_or(i64::MAX),
            };
            self.network_slice(machine, ts, clock, &packet);
            return;
        }
        // The packets pair up as far as both lists go, as the reference reads them; a list
        // longer than the other is malformed and counted.
        if bundle.packet_timestamps.len() != bundle.packet_lengths.len() {
            self.sink.stat("network_trace_parse_errors", machine, 1);
        } else if bundle.packet_timestamps.is_empty() {
            // An empty bundle: nothing to place, nothing lost.
            self.sink.touch();
        }
        for (&offset, &length) in bundle.packet_timestamps.iter().zip(&bundle.packet_lengths) {
            let at = i64::try_from(offset)
                .ok()
                .and_then(|o| ts.checked_add(o))
                .unwrap_or(i64::MAX);
            let packet = Packet {
                ctx: &ctx,
                length: i64::from(length),
                count: 1,
                dur: 0,
            };
            self.network_slice(machine, at, clock, &packet);
        }
    }

    fn network_slice(&mut self, machine: MachineId, ts: i64, clock: ClockRef, p: &Packet) {
        let ev = p.ctx;
        let direction = match ev.direction() {
            protos::TrafficDirection::DirIngress => "Received",
            protos::TrafficDirection::DirEgress => "Transmitted",
            protos::TrafficDirection::DirUnspecified => "DIR_UNKNOWN",
        };
        let iface = ev.interface.as_deref().unwrap_or("");
        let track_name = self.sink.intern(&format!("{iface} {direction}"));
        let uid = ev.uid.unwrap_or(0);
        let fallback = self.sink.intern(&format!("uid={uid}"));
        let transport = match transport_name(ev.ip_proto.unwrap_or(0)) {
            Some(name) => self.sink.intern(name),
            None => self
                .sink
                .intern(&format!("IPPROTO ({})", ev.ip_proto.unwrap_or(0))),
        };
        let tag = self.sink.intern(&format!("{:#x}", ev.tag.unwrap_or(0)));
        let mut args = vec![
            self.sink
                .static_arg("packet_length", ArgValue::Int(p.length)),
            self.sink.static_arg("packet_count", ArgValue::Int(p.count)),
            self.sink
                .static_arg("packet_transport", ArgValue::Str(transport)),
            self.sink.static_arg(
                "packet_tcp_flags",
                ArgValue::Int(i64::from(ev.tcp_flags.unwrap_or(0))),
            ),
            self.sink.static_arg("socket_tag", ArgValue::Str(tag)),
            self.sink
                .static_arg("socket_uid", ArgValue::Int(i64::from(uid))),
        ];
        let optional = [
            ("local_port", ev.local_port),
            ("remote_port", ev.remote_port),
            ("packet_icmp_type", ev.icmp_type),
            ("packet_icmp_code", ev.icmp_code),
        ];
        for (key, value) in optional {
            if let Some(v) = value {
                args.push(self.sink.static_arg(key, ArgValue::Int(i64::from(v))));
            }
        }
        let set = AsyncSet {
            kind: "android_network_packets",
            machine,
            process: None,
            name: track_name,
            scope: NULL_STR,
        };
        let track = self.sink.track(TrackKey::AsyncScoped { set });
        let slice = SliceEvent {
            track,
            category: track_name,
            name: fallback,
            args: self.sink.args.push(&args),
            thread_ts: NO_TS,
            flows: NO_FLOWS,
        };
        let data = EventData::NetworkPacket {
            slice,
            dur: p.dur,
            uid: i64::from(uid % PER_USER_RANGE),
        };
        self.sink.push(ts, clock, data);
    }
}
