//! End to end on a real trace: filter the tracks, select an area, read its aggregates.

use super::*;

#[test]
fn filter_tracks_and_select_an_area_on_a_real_trace() {
    let history = TempFile::new("history");
    let tmp = TempDir::new("pty-tmp");
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/real/android/perfettoskills_api32_startup_warm.perfetto-trace"
    );
    let mut pty = Pty::spawn(&[trace], &history, &tmp, &[]);
    let at = pty.wait_for("events from", 0);
    // The timeline loads once the import is done: its footer says how to zoom.
    pty.wait_for("w/s zoom", 0);
    std::thread::sleep(Duration::from_millis(1000));
    // The kernel threads are grouped at the end of the machine.
    pty.send("G");
    let at = pty.wait_for("Kernel threads", at);
    pty.send("g");
    pty.send("T");
    pty.send("surfacef");
    let at = pty.wait_for("surfacef", at);
    pty.send("\r");
    // The footer keeps the filter in view ("… · Esc clears the filter").
    let at = pty.wait_for("filter", at);
    // Clear the filter, then an area over the whole machine.
    pty.send("\x1b");
    pty.send("g");
    pty.send("v");
    for _ in 0..3 {
        pty.send("L");
    }
    pty.send("\r");
    let at = pty.wait_for("Slices", at);
    pty.wait_for("occurrences", at);
    pty.send(">");
    // The Thread states tab (its title short at 80 columns): its share column.
    let at = pty.wait_for("percent", at);
    pty.send("q");
    let status = pty.wait_exit("q");
    assert!(status.success(), "exit status {status}");
    pty.assert_restored(at);
    assert_eq!(tmp.entries(), Vec::<String>::new());
}
