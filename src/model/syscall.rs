//! Names of syscalls (`sys_enter` / `sys_exit` ftrace events carry only a number, whose
//! meaning depends on the machine's architecture, taken from SystemInfo's utsname).

use super::syscall_table::{AARCH64, ARM, X86, X86_64};

/// The table for a `uname -m` machine string, when Sextant knows it.
fn table(machine: &str) -> Option<&'static [&'static str]> {
    match machine {
        "aarch64" | "arm64" => Some(&AARCH64),
        "x86_64" | "amd64" => Some(&X86_64),
        "i386" | "i486" | "i586" | "i686" | "x86" => Some(&X86),
        m if m.starts_with("arm") => Some(&ARM),
        _ => None,
    }
}

/// `sys_<name>` for syscall `number` on `machine`, or None when the architecture or the
/// number is unknown.
pub(crate) fn name(machine: &str, number: i64) -> Option<&'static str> {
    let table = table(machine)?;
    let name = *table.get(usize::try_from(number).ok()?)?;
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::name;

    #[test]
    fn numbers_depend_on_the_architecture() {
        assert_eq!(name("aarch64", 0), Some("sys_io_setup"));
        assert_eq!(name("aarch64", 63), Some("sys_read"));
        assert_eq!(name("x86_64", 0), Some("sys_read"));
        assert_eq!(name("x86_64", 59), Some("sys_execve"));
        assert_eq!(name("armv7l", 3), Some("sys_read"));
        assert_eq!(name("i686", 11), Some("sys_execve"));
    }

    #[test]
    fn unknown_architectures_and_numbers_have_no_name() {
        assert_eq!(name("riscv64", 63), None);
        assert_eq!(name("x86_64", -1), None);
        assert_eq!(name("x86_64", 100_000), None);
        // A gap in the table.
        assert_eq!(name("aarch64", 244), None);
    }
}
