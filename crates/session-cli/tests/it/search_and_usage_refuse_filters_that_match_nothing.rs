//! `sessions search` and `sessions usage` refuse, as usage errors (exit code 2, nothing read,
//! nothing on stdout), a `--since`/`--until` window that holds no time (search's `--until` is
//! inclusive, usage's exclusive; both messages give the rule and the two times), and search
//! refuses an unknown `--role` or `--type` and an empty `--fields`, listing the valid values.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::support::{plant, run_in, tempdir};

fn session(dir: &std::path::Path) {
    plant(
        &dir.join("s.jsonl"),
        b"{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"cwd\":\"/\"}\n\
          {\"type\":\"label\",\"id\":\"l1\",\"parentId\":null,\"targetId\":\"x\",\"label\":\"zebra\",\"timestamp\":\"2026-11-01T10:08:00.000Z\"}\n",
    );
}

/// Runs `args` in `dir` and returns (exit code, stdout, stderr).
fn run(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let r = run_in(dir, args);
    (r.code, r.stdout, r.stderr)
}

fn usage_error(msg: &str) -> (i32, String, String) {
    (2, String::new(), format!("error: {msg}\n"))
}

#[test]
fn search_refuses_a_window_that_holds_no_time() {
    let t = tempdir();
    session(t.path());
    assert_eq!(
        run(
            t.path(),
            &[
                "search",
                "--since",
                "2026-11-02",
                "--until",
                "2026-11-01",
                "zebra",
                "s.jsonl"
            ]
        ),
        usage_error(
            "--since must not be after --until (the window is since <= time <= until; got \
             --since 2026-11-02T00:00:00.000Z and --until 2026-11-01T00:00:00.000Z)"
        )
    );
    // Since equal to until is the one millisecond of the window: the entry at it is a hit.
    let at = "2026-11-01T10:08:00Z";
    assert_eq!(
        run(
            t.path(),
            &[
                "search", "-c", "--since", at, "--until", at, "zebra", "s.jsonl"
            ]
        ),
        (0, "s.jsonl:1\n".to_owned(), String::new())
    );
}

#[test]
fn usage_refuses_a_window_that_holds_no_time() {
    let t = tempdir();
    session(t.path());
    for (since, until) in [("2026-11-02", "2026-11-01"), ("2026-11-02", "2026-11-02")] {
        assert_eq!(
            run(
                t.path(),
                &["usage", "--since", since, "--until", until, "s.jsonl"]
            ),
            usage_error(&format!(
                "--since must be before --until (the window is since <= time < until; got \
                 --since {since}T00:00:00.000Z and --until {until}T00:00:00.000Z)"
            ))
        );
    }
}

#[test]
fn search_refuses_unknown_roles_and_types_and_an_empty_field_list() {
    let t = tempdir();
    session(t.path());
    let roles = "user, assistant, toolResult, bashExecution, custom";
    for role in ["usr", "user,tool"] {
        let name = role.rsplit(',').next().unwrap();
        assert_eq!(
            run(t.path(), &["search", "--role", role, "zebra", "s.jsonl"]),
            usage_error(&format!("unknown role {name:?} (expected one of {roles})"))
        );
    }
    assert_eq!(
        run(t.path(), &["search", "--role", "", "zebra", "s.jsonl"]),
        usage_error(&format!("unknown role \"\" (expected one of {roles})"))
    );
    // pi's context-only roles, and what the ROLE column prints for entries that are not
    // messages, point to --type.
    for (role, ty) in [
        ("branchSummary", "branch_summary"),
        ("compactionSummary", "compaction"),
        ("branch_summary", "branch_summary"),
        ("custom_message", "custom_message"),
    ] {
        assert_eq!(
            run(t.path(), &["search", "--role", role, "zebra", "s.jsonl"]),
            usage_error(&format!(
                "unknown role {role:?} (expected one of {roles}; {role:?} is not a message \
                 role: use --type {ty})"
            ))
        );
    }
    assert_eq!(
        run(
            t.path(),
            &["search", "--type", "label,msg", "zebra", "s.jsonl"]
        ),
        usage_error(
            "unknown entry type \"msg\" (expected one of message, thinking_level_change, \
             model_change, compaction, branch_summary, custom, custom_message, label, \
             session_info, reset, leaf)"
        )
    );
    // The header is not an entry: `session` is not a type to search.
    assert_eq!(
        run(
            t.path(),
            &["search", "--type", "session", "zebra", "s.jsonl"]
        )
        .0,
        2
    );
    for list in ["", " , "] {
        assert_eq!(
            run(t.path(), &["search", "--fields", list, "zebra", "s.jsonl"]),
            (
                2,
                String::new(),
                format!(
                    "error: invalid value '{list}' for '--fields <LIST>': no field to search in \
                     (expected a comma-separated list of text, thinking, tool, args, result, \
                     summary, custom, label, id, key, other, or all)\n\n\
                     For more information, try '--help'.\n"
                )
            )
        );
    }
    // The valid values still work.
    assert_eq!(
        run(
            t.path(),
            &[
                "search", "-c", "--type", "label", "--fields", "label", "zebra", "s.jsonl"
            ]
        ),
        (0, "s.jsonl:1\n".to_owned(), String::new())
    );
}
