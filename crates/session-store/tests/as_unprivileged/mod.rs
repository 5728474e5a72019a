//! Permission checks that must not run as root (permissions do not bind it): as root, the test
//! re-runs itself in a child process as `nobody`, with its scratch directory in [`PERM_CHILD`].
//! Used by `tests/rewrite_side_effects.rs` and `tests/repair_permissions.rs`.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.
#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The environment variable naming the scratch directory in the child run as `nobody`; a test
/// that finds it set is the child and runs its check on that directory.
pub const PERM_CHILD: &str = "SESSION_STORE_PERM_CHILD_DIR";

/// True when this process is root (Linux: `/proc/self` belongs to the effective uid).
pub fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Runs `name` (a test of this test binary) in a child process as `nobody` (uid and gid 65534)
/// with `dir` in [`PERM_CHILD`], and asserts that it ran exactly that one test and passed. When
/// the child cannot be started the check is skipped with a printed reason.
pub fn run_as_nobody(name: &str, dir: &Path) {
    use std::os::unix::process::CommandExt;
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(PERM_CHILD, dir)
        .uid(65534)
        .gid(65534)
        .output();
    match out {
        Err(e) => eprintln!("{name}: cannot run the check as nobody ({e}); not checked"),
        Ok(out) => {
            assert!(
                out.status.success(),
                "child failed: {:?}\n{}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                stdout.contains("1 passed"),
                "the child ran no test: {stdout}"
            );
        }
    }
}

/// A temporary directory others can reach (mode 0755, canonical path) with a `sessions`
/// directory of `mode` in it: `(guard, sessions directory)`.
pub fn open_dir(mode: u32) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let d = std::fs::canonicalize(tmp.path()).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
    let inner = d.join("sessions");
    std::fs::create_dir(&inner).unwrap();
    std::fs::set_permissions(&inner, std::fs::Permissions::from_mode(mode)).unwrap();
    (tmp, inner)
}
