//! How the timeline labels and orders what ML profilers record (PyTorch's Kineto): the GPU
//! devices Kineto writes as processes whose threads are `stream N`, shown after the CPU
//! processes as `GPU N`, one track per stream in stream order; thread labels that do not
//! repeat a tid the name already holds, nor show the made-up tids of string thread ids.

/// The stream number of a thread Kineto named `stream N` (its GPU stream).
pub fn stream_number(name: &str) -> Option<i64> {
    let rest = name.trim().strip_prefix("stream ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// A thread's label: its name and tid, the tid left out where the name already says it or
/// where it is Sextant's own number for a thread the trace named by a string (above the
/// 32-bit range).
pub fn thread_label(name: Option<&str>, tid: i64) -> String {
    let name = name.map(str::trim).filter(|n| !n.is_empty());
    let synthetic = !(0..=i64::from(u32::MAX)).contains(&tid);
    match name {
        Some(n) if synthetic => n.to_string(),
        Some(n) => {
            let t = tid.to_string();
            let says_tid = n
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|word| word == t);
            if says_tid {
                n.to_string()
            } else {
                format!("{n} {tid}")
            }
        }
        None if synthetic => "thread".to_string(),
        None => format!("thread {tid}"),
    }
}

/// A GPU device's label: Kineto writes the device index as the pid.
pub fn gpu_label(pid: i64, name: Option<&str>) -> String {
    match name.map(str::trim).filter(|n| !n.is_empty()) {
        Some(n) => format!("GPU {pid} ({n})"),
        None => format!("GPU {pid}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_recognised_however_kineto_spells_them() {
        assert_eq!(stream_number("stream 7"), Some(7));
        assert_eq!(stream_number("stream 7 "), Some(7));
        assert_eq!(stream_number("stream 13 (copy)"), Some(13));
        assert_eq!(stream_number("streamer 7"), None);
        assert_eq!(stream_number("thread 7"), None);
    }

    #[test]
    fn thread_labels_say_the_tid_once() {
        assert_eq!(thread_label(Some("stream 7 "), 7), "stream 7");
        assert_eq!(
            thread_label(Some("thread 5617 (python3)"), 5617),
            "thread 5617 (python3)"
        );
        assert_eq!(thread_label(Some("CrBrowserMain"), 42), "CrBrowserMain 42");
        assert_eq!(thread_label(Some("stream 7"), 4_294_967_298), "stream 7");
        assert_eq!(thread_label(None, 12), "thread 12");
        assert_eq!(thread_label(Some("worker 12a"), 12), "worker 12a 12");
    }
}
