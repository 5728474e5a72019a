//! An untouched version 1 or 2 file needs migration: `check` reports it as a note
//! (`info: needs-migration`), not a problem, and exits 0; the read-only views (tree, show,
//! context, export, list) of a version 1 file show the same entry ids on every run, derived
//! from the file: the entry on 1-based line L gets the first 8 hex of
//! SHA-256("<F>:<L>"), F the hex SHA-256 of the file's bytes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use sha2::{Digest, Sha256};

use crate::support::*;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The documented id of the entry on `line` of a file with these bytes.
fn derived(bytes: &[u8], line: usize) -> String {
    let file = hex(&Sha256::digest(bytes));
    hex(&Sha256::digest(format!("{file}:{line}").as_bytes()))[..8].to_owned()
}

/// `(id, parentId, line)` of each node of `tree --json`.
fn tree_ids(file: &str) -> Vec<(String, Option<String>, u64)> {
    let r = run(["tree", "--json", file]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // No problem is mentioned for an unmigrated file.
    assert_eq!(r.stderr, "");
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["id"].as_str().unwrap().to_owned(),
                n["parentId"].as_str().map(str::to_owned),
                n["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_v1_file_shows_the_same_derived_ids_on_every_run() {
    let bytes = std::fs::read(fixture("v1.jsonl")).unwrap();
    let first = tree_ids("v1.jsonl");
    assert_eq!(first, tree_ids("v1.jsonl"));
    let (a, b) = (derived(&bytes, 2), derived(&bytes, 3));
    assert_eq!((a.as_str(), b.as_str()), ("cca3a117", "7f12437b"));
    assert_eq!(
        first,
        [(a.clone(), None, 2), (b.clone(), Some(a.clone()), 3)]
    );
    // show and context address and show the same ids.
    let show = run(["show", "v1.jsonl", &b]);
    assert_eq!(show.code, 0, "{}", show.stderr);
    let v: serde_json::Value = serde_json::from_str(&show.stdout).unwrap();
    assert_eq!(
        (v["id"].as_str(), v["parentId"].as_str()),
        (Some(&*b), Some(&*a))
    );
    let ctx = run(["context", "v1.jsonl"]);
    assert_eq!(ctx.code, 0, "{}", ctx.stderr);
    assert!(
        ctx.stdout
            .starts_with(&format!("v1.jsonl — context at leaf {b}: 2 messages")),
        "{}",
        ctx.stdout
    );
    // The file is not changed by any of it.
    assert_eq!(std::fs::read(fixture("v1.jsonl")).unwrap(), bytes);
}

#[test]
fn changed_bytes_give_other_ids() {
    let dir = tempdir();
    let mut bytes = std::fs::read(fixture("v1.jsonl")).unwrap();
    bytes.extend_from_slice(b"\n");
    let copy = dir.path().join("v1-copy.jsonl");
    plant(&copy, &bytes);
    let ids = tree_ids(copy.to_str().unwrap());
    assert_eq!(
        ids.iter().map(|(id, ..)| id.clone()).collect::<Vec<_>>(),
        [derived(&bytes, 2), derived(&bytes, 3)]
    );
    assert_ne!(ids[0].0, "cca3a117");
}

#[test]
fn check_notes_an_unmigrated_file_and_exits_0() {
    let dir = tempdir();
    // A version 2 file: stored ids, an old version.
    let v2 = dir.path().join("v2.jsonl");
    plant(
        &v2,
        b"{\"type\":\"session\",\"version\":2,\"id\":\"s2\",\"timestamp\":\"2026-01-02T09:00:00.000Z\",\"cwd\":\"/w\"}\n\
          {\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\"timestamp\":\"2026-01-02T09:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}}\n",
    );
    let v2s = v2.to_str().unwrap();
    let r = run(["check", "v1.jsonl", v2s]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(
        r.stdout,
        format!(
            "v1.jsonl:1: byte 0: info: needs-migration: version 1: needs migration (a note, not \
             a problem); a writable open would migrate the file to version 3 and rewrite it\n\
             v1.jsonl: ok (2 entries)\n\
             {v2s}:1: byte 0: info: needs-migration: version 2: needs migration (a note, not a \
             problem); a writable open would migrate the file to version 3 and rewrite it\n\
             {v2s}: ok (1 entry)\n\
             checked 2 files: 2 ok\n"
        )
    );
    let r = run(["check", "--json", "v1.jsonl"]);
    assert_eq!(r.code, 0);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v[0]["ok"], true);
    assert_eq!(v[0]["tips"], serde_json::json!(["7f12437b"]));
    assert_eq!(
        v[0]["problems"],
        serde_json::json!([{
            "kind": "needs-migration",
            "severity": "info",
            "line": 1,
            "byteOffset": 0,
            "message": "version 1: needs migration (a note, not a problem); a writable open \
                        would migrate the file to version 3 and rewrite it",
        }])
    );
}
