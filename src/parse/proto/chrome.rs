//! Chrome's own packets: ChromeMetadataPacket (metadata rows with their `cr-` prefixes) and
//! StreamingProfilePacket (CPU samples). They hand on metadata and sample events.

use super::*;

/// Standard base64 with padding (Chrome's background tracing metadata is stored so).
pub(super) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

impl Parser<'_> {
    /// Chrome's own metadata: `cr-<a, b, …>-<key>` per packet, and the background
    /// tracing scenario (kept base64-encoded, with its rule and scenario hashes).
    pub(super) fn chrome_metadata(&mut self, machine: MachineId, m: &protos::ChromeMetadataPacket) {
        let letter = char::from(b'a' + (self.chrome_metadata_packets % 26) as u8);
        self.chrome_metadata_packets += 1;
        let key = |name: &str| format!("cr-{letter}-{name}");
        let mut meta: Vec<(String, MetaValue)> = Vec::new();
        if let Some(v) = m.chrome_version_code {
            meta.push((key("playstore_version_code"), MetaValue::Int(i64::from(v))));
        }
        if let Some(v) = &m.enabled_categories {
            meta.push((key("enabled_categories"), MetaValue::Str(v.clone())));
        }
        if !m.field_trial_hashes.is_empty() {
            let hashes: String = m
                .field_trial_hashes
                .iter()
                .map(|h| {
                    format!(
                        "{{ name: {}, group: {} }} ",
                        h.name.unwrap_or(0),
                        h.group.unwrap_or(0)
                    )
                })
                .collect();
            meta.push((key("field_trial_hashes"), MetaValue::Str(hashes)));
        }
        for (name, value) in [
            ("package-name", &m.app_package_name),
            ("product-version", &m.app_version),
            ("os-name", &m.os_name),
        ] {
            if let Some(v) = value {
                meta.push((key(name), MetaValue::Str(v.clone())));
            }
        }
        if let Some(v) = m.channel {
            meta.push((key("channel"), MetaValue::Int(i64::from(v))));
        }
        if let Some(raw) = &m.background_tracing_metadata {
            meta.push((
                "cr-background_tracing_metadata".to_string(),
                MetaValue::Str(base64(raw)),
            ));
            if let Ok(bg) = protos::BackgroundTracingMetadata::decode(raw.as_slice()) {
                if let Some(hash) = bg.triggered_rule.and_then(|r| r.name_hash) {
                    meta.push((
                        "cr-triggered_rule_name_hash".to_string(),
                        MetaValue::Int(i64::from(hash)),
                    ));
                }
                if let Some(hash) = bg.scenario_name_hash {
                    meta.push((
                        "cr-scenario_name_hash".to_string(),
                        MetaValue::Int(i64::from(hash)),
                    ));
                }
            }
        }
        for (k, v) in meta {
            self.sink.metadata(k, machine, v);
        }
    }
}
