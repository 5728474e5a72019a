//! Shared helpers for tests that read `../shared` (specs, conformance samples, fixtures).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.
#![allow(dead_code)]

use std::path::PathBuf;

/// The shared folder (`$SESSION_SHARED_DIR`, else `<workspace>/../shared`), or `None` with a
/// printed reason so the calling test can skip on a fresh clone without it.
pub fn shared_dir(test: &str) -> Option<PathBuf> {
    session_test_support::shared_dir(test)
}

/// Reads a file under the shared folder.
pub fn read_shared(dir: &std::path::Path, rel: &str) -> Vec<u8> {
    std::fs::read(dir.join(rel)).unwrap_or_else(|e| panic!("reading {rel}: {e}"))
}

/// The `file` texts of every snapshot in an expected output, with their script and label.
pub fn expected_files(dir: &std::path::Path) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let exp = dir.join("conformance/expected/openclaw-2026.6.11");
    let mut names: Vec<_> = std::fs::read_dir(&exp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    for path in names {
        let value: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        for item in value.as_array().unwrap() {
            if let Some(snap) = item.get("snapshot")
                && let Some(file) = snap["file"].as_str()
            {
                out.push((
                    path.file_name().unwrap().to_string_lossy().into_owned(),
                    snap["label"].as_str().unwrap_or("").to_owned(),
                    file.to_owned(),
                ));
            }
        }
    }
    out
}
