//! `sessions usage`: files that cannot be counted are reported and the rest still summed (exit
//! code 2), a fork whose parent cannot be read is counted whole with a warning, and the files
//! read are never changed (a v1 file is not migrated).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use serde_json::Value;

use crate::support::{fingerprint, plant, run_in, tempdir};
use crate::usage_json_shape::{branched_session, fork_session};

#[test]
fn a_file_that_is_not_a_session_is_an_error_the_rest_is_summed() {
    let t = tempdir();
    let d = t.path().join("s");
    plant(&d.join("a.jsonl"), &branched_session("a"));
    plant(&d.join("b.jsonl"), b"{\"type\":\"message\",\"id\":\"x\"}\n");
    plant(&d.join("c.jsonl"), b"");
    let r = run_in(t.path(), ["usage", "--dir", "s", "--json"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["sessions"], 1);
    assert_eq!(v["total"]["input"], 2005);
    let errors: Vec<(String, String)> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let f = e["file"].as_str().unwrap();
            (
                f.rsplit('/').next().unwrap().to_owned(),
                e["error"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        errors,
        [
            (
                "b.jsonl".to_owned(),
                "not a session: the first line that parses is not a session header ({\"type\":\"session\",\"id\":...})".to_owned()
            ),
            ("c.jsonl".to_owned(), "not a session: the file is empty".to_owned()),
        ]
    );

    let text = run_in(t.path(), ["usage", "--dir", "s"]);
    assert_eq!(text.code, 2);
    assert!(
        text.stderr.contains("b.jsonl: not a session"),
        "{}",
        text.stderr
    );
    assert!(
        text.stdout
            .contains("\n1 of 4 assistant messages had no usage\n"),
        "{}",
        text.stdout
    );

    let missing = run_in(t.path(), ["usage", "s/a.jsonl", "s/nope.jsonl", "--json"]);
    assert_eq!(missing.code, 2);
    let v: Value = serde_json::from_str(&missing.stdout).unwrap();
    assert_eq!(v["sessions"], 1);
    assert_eq!(v["errors"][0]["file"], "s/nope.jsonl");
}

#[test]
fn a_fork_whose_parent_is_gone_counts_whole_with_a_warning() {
    let t = tempdir();
    let d = t.path().join("s");
    plant(
        &d.join("fork.jsonl"),
        &fork_session("f", "/nonexistent/parent.jsonl"),
    );
    let r = run_in(t.path(), ["usage", "s/fork.jsonl", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["copiesSkipped"], 0);
    // Copies included: a1 1200 + a2 800 + its own f2 10000.
    assert_eq!(v["total"]["input"], 12000);
    let w = v["warnings"][0].as_str().unwrap();
    assert!(
        w.starts_with(
            "s/fork.jsonl: its parent session /nonexistent/parent.jsonl cannot be read ("
        ),
        "{w}"
    );
    assert!(
        w.ends_with("every entry of the fork is counted, copies of the parent's included"),
        "{w}"
    );
    assert!(
        r.stderr
            .contains("warning: s/fork.jsonl: its parent session"),
        "{}",
        r.stderr
    );

    // With the parent at a relative path from the fork's directory (and not among the files
    // summed), only the fork's own entries count.
    plant(&d.join("parent.jsonl"), &branched_session("p"));
    plant(&d.join("fork2.jsonl"), &fork_session("f2", "parent.jsonl"));
    let r = run_in(t.path(), ["usage", "s/fork2.jsonl", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["copiesSkipped"], 6);
    assert_eq!(v["total"]["input"], 10000);
    assert_eq!(v["total"]["messages"], 2);
}

#[test]
fn usage_never_writes_even_a_v1_file() {
    let Some(pi) = crate::support::pi_fixture("usage_never_writes_even_a_v1_file") else {
        return;
    };
    let t = tempdir();
    let f = t.path().join("pi.jsonl");
    crate::support::plant_copy(&pi, &f);
    let before = fingerprint(&f);
    for args in [
        vec!["usage", "pi.jsonl"],
        vec!["usage", "pi.jsonl", "--json", "--by", "session"],
    ] {
        let r = run_in(t.path(), &args);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    assert_eq!(fingerprint(&f), before);
    assert_eq!(crate::support::contents(t.path()).len(), 1);
}

#[test]
fn a_file_named_twice_or_through_a_link_is_summed_once() {
    let t = tempdir();
    let d = t.path().join("s");
    plant(&d.join("a.jsonl"), &branched_session("a"));
    std::os::unix::fs::symlink("a.jsonl", d.join("link.jsonl")).unwrap();
    // A trajectory sidecar in a listed directory is not a session.
    plant(&d.join("a.trajectory.jsonl"), &branched_session("a"));
    let once = run_in(t.path(), ["usage", "--json", "s/a.jsonl"]);
    assert_eq!(once.code, 0, "{}", once.stderr);
    let once: Value = serde_json::from_str(&once.stdout).unwrap();
    for args in [
        vec![
            "usage",
            "--json",
            "s/a.jsonl",
            "s/a.jsonl",
            "s/link.jsonl",
            "s/../s/a.jsonl",
        ],
        vec!["usage", "--json", "--dir", "s"],
    ] {
        let r = run_in(t.path(), &args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(v["sessions"], 1, "{args:?}");
        assert_eq!(v["total"], once["total"], "{args:?}");
    }
    assert_eq!(once["total"]["input"], 2005);
}

#[test]
fn usage_too_large_to_count_is_reported_and_the_json_stays_valid() {
    let t = tempdir();
    let asst = |id: &str, usage: &str| {
        format!(
            "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":null,\"timestamp\":\"2026-06-01T10:00:00.000Z\",\"message\":{{\"role\":\"assistant\",\"content\":[],\"provider\":\"p\",\"model\":\"m\",\"usage\":{usage}}}}}\n"
        )
    };
    let body = format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"big\",\"cwd\":\"/\"}}\n{}{}{}{}",
        asst(
            "a1",
            "{\"input\":1e400,\"output\":5,\"cost\":{\"output\":0.5}}"
        ),
        asst(
            "a2",
            "{\"input\":9007199254740993,\"output\":7,\"cost\":{\"input\":0.25}}"
        ),
        asst("a3", "{\"cacheWrite\":1.7e308}"),
        // Adding a4 would make the cache-write sum infinite: not countable.
        asst("a4", "{\"cacheWrite\":1.7e308,\"output\":1000}"),
    );
    plant(&t.path().join("big.jsonl"), body.as_bytes());
    let r = run_in(t.path(), ["usage", "--utc", "big.jsonl"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert_eq!(
        r.stdout,
        // Above 2^53 a sum is a double as inexact as pi's (2^53 + 1 is 2^53 in JavaScript too);
        // a1's 1e400 input adds 0 and its output 5 is added (as in pi's export); a4 is left out.
        "DAY         MESSAGES  TOOL CALLS             INPUT  OUTPUT  CACHE READ  CACHE WRITE  TOTAL TOKENS    COST\n\
         2026-06-01         4           0  9007199254740992      12           0     1.7e+308      1.7e+308  $0.750\n\
         TOTAL              4           0  9007199254740992      12           0     1.7e+308      1.7e+308  $0.750\n\
         \n\
         0 of 4 assistant messages had no usage; 1 had usage that is not countable (it would make a sum infinite), not added\n\
         1 session\n"
    );
    let r = run_in(t.path(), ["usage", "--utc", "--json", "big.jsonl"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    for counts in [&v["total"], &v["rows"][0]] {
        assert_eq!(counts["notCountable"], 1);
        assert_eq!(counts["withoutUsage"], 0);
        assert_eq!(counts["input"], 9_007_199_254_740_992_u64);
        assert_eq!(counts["output"], 12);
        assert_eq!(counts["cacheWrite"], 1.7e308);
        assert_eq!(counts["cost"], 0.75);
    }
    assert!(!r.stdout.contains("Infinity") && !r.stdout.contains("null,\n      \"output\""));
}

#[test]
fn usage_by_session_warns_when_files_share_a_session_id() {
    let t = tempdir();
    let body = |input: u32| {
        format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"dup\",\"cwd\":\"/\"}}\n\
             {{\"type\":\"message\",\"id\":\"a1\",\"parentId\":null,\"timestamp\":\"2026-06-01T10:00:00.000Z\",\"message\":{{\"role\":\"assistant\",\"content\":[],\"usage\":{{\"input\":{input},\"output\":0}}}}}}\n"
        )
    };
    plant(&t.path().join("s/b.jsonl"), body(2).as_bytes());
    plant(&t.path().join("s/a.jsonl"), body(3).as_bytes());
    plant(
        &t.path().join("s/c.jsonl"),
        b"{\"type\":\"session\",\"version\":3,\"id\":\"other\",\"cwd\":\"/\"}\n",
    );
    let warning = "warning: 2 files share the session id \"dup\" (--by session sums them in one \
                   row): s/a.jsonl, s/b.jsonl\n";
    let r = run_in(
        t.path(),
        ["usage", "--utc", "--by", "session", "--dir", "s"],
    );
    assert_eq!((r.code, r.stderr.as_str()), (0, warning));
    assert_eq!(
        r.stdout,
        "SESSION  MESSAGES  TOOL CALLS  INPUT  OUTPUT  CACHE READ  CACHE WRITE  TOTAL TOKENS    COST\n\
         dup             2           0      5       0           0            0             5  $0.000\n\
         TOTAL           2           0      5       0           0            0             5  $0.000\n\
         \n\
         0 of 2 assistant messages had no usage\n\
         3 sessions\n"
    );
    let r = run_in(
        t.path(),
        ["usage", "--json", "--by", "session", "--dir", "s"],
    );
    assert_eq!((r.code, r.stderr.as_str()), (0, warning));
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        v["warnings"],
        serde_json::json!([warning.trim_end().strip_prefix("warning: ").unwrap()])
    );
    // Other groupings do not warn.
    let r = run_in(t.path(), ["usage", "--utc", "--dir", "s"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
}
