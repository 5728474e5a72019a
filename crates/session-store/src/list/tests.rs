//! The targeted scan of `list` against the full parse it replaced ([`super::oracle`]): every
//! `SessionInfo` field must be equal (NaN times compared by their bits), for hand-made edge
//! cases, generated rows, the conformance corpus and the benchmark store; and `list`'s order
//! must be the sequential full-parse order.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};

use super::oracle_tests::session_info_full_parse;
use super::{InfoReader, SessionInfo, jsonl_files, list, list_all, session_info, sort_by_modified};
use crate::io;

/// A `SessionInfo` with the times as bits, so that NaN equals NaN.
#[derive(Debug, PartialEq)]
struct Exact {
    info: SessionInfo,
    modified: u64,
    created: Option<u64>,
}

fn exact(info: Option<SessionInfo>) -> Option<Exact> {
    info.map(|mut info| {
        let modified = info.modified.to_bits();
        let created = info.created.map(f64::to_bits);
        info.modified = 0.0;
        info.created = None;
        Exact {
            info,
            modified,
            created,
        }
    })
}

thread_local! {
    /// One [`InfoReader`] for every file a test thread checks, so that its buffers are reused
    /// across files of every size, as a listing reuses them.
    static READER: std::cell::RefCell<InfoReader> = std::cell::RefCell::new(InfoReader::new());
}

/// Asserts that [`InfoReader::read`] gives the info of [`session_info`] and the metadata of
/// `fs::metadata` (size, mtime, inode) for `path`.
fn check_reader(path: &Path, expected: Option<&SessionInfo>) {
    let meta = std::fs::metadata(path).unwrap();
    READER.with_borrow_mut(|r| {
        let (m, info) = r.read(path).unwrap();
        assert_eq!(
            exact(info),
            exact(expected.cloned()),
            "InfoReader::read differs from session_info on {}",
            path.display()
        );
        assert_eq!(
            (
                m.len(),
                m.modified().unwrap(),
                crate::identity::FileId::of(&m)
            ),
            (
                meta.len(),
                meta.modified().unwrap(),
                crate::identity::FileId::of(&meta)
            ),
            "InfoReader::read metadata of {}",
            path.display()
        );
    });
}

/// Asserts that the scan and the full parse agree on `path` (the info and, read again on
/// demand, the full text), and that [`InfoReader`] agrees with both; returns the scan's result.
fn check(path: &Path) -> Option<SessionInfo> {
    let new = session_info(path);
    check_reader(path, new.as_ref());
    let (old, old_text) = session_info_full_parse(path).unzip();
    assert_eq!(
        exact(new.clone()),
        exact(old),
        "targeted scan and full parse differ on {}",
        path.display()
    );
    assert_eq!(
        new.as_ref().map(|n| n.all_messages_text().unwrap()),
        old_text,
        "the full text differs on {}",
        path.display()
    );
    new
}

/// `list` as it was: sequential, full parse, then the same sort.
fn list_full_parse(dir: &Path) -> Vec<SessionInfo> {
    let mut out: Vec<SessionInfo> = jsonl_files(dir)
        .unwrap()
        .iter()
        .filter_map(|p| session_info_full_parse(p).map(|(info, _)| info))
        .collect();
    sort_by_modified(&mut out);
    out
}

fn assert_same_list(new: Vec<SessionInfo>, old: Vec<SessionInfo>) {
    assert_eq!(new.len(), old.len());
    for (n, o) in new.into_iter().zip(old) {
        assert_eq!(exact(Some(n)), exact(Some(o)));
    }
}

fn plant(path: &Path, bytes: &[u8]) {
    io::write_raw(path, bytes).unwrap();
}

const H: &str = r#"{"type":"session","version":3,"id":"0195f000-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/dev/project"}"#;

fn row(message: &str) -> String {
    format!(
        r#"{{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{message}}}"#
    )
}

fn user(content: &str) -> String {
    row(&format!(
        r#"{{"role":"user","content":{content},"timestamp":1767225600000}}"#
    ))
}

/// Hand-made files, each probing one rule of `buildSessionInfo` (name, bytes).
fn edge_cases() -> Vec<(String, Vec<u8>)> {
    let deep_skip = format!(
        r#"{{"type":"message","id":"d","parentId":null,"deep":{}{},"message":{{"role":"user","content":"after deep"}}}}"#,
        "[".repeat(1001),
        "]".repeat(1001)
    );
    let shallow_braces = row(&format!(
        r#"{{"role":"user","content":"{}","timestamp":5}}"#,
        "{[".repeat(1200)
    ));
    let deep_content = user(&format!(
        r#"[{{"type":"text","text":{}1{}}}]"#,
        "[".repeat(1000),
        "]".repeat(1000)
    ));
    let just_deep_enough = user(&format!(
        r#"[{{"type":"text","text":{}1{}}}]"#,
        "[".repeat(996),
        "]".repeat(996)
    ));
    let rows: Vec<(&str, Vec<String>)> = vec![
        ("plain", vec![
            user(r#""hello""#),
            row(r#"{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"a1"},{"type":"toolCall","id":"c","name":"bash","arguments":{"cmd":"ls","n":[1,{"x":"}"}]}},{"type":"text","text":"a2"}],"usage":{"input":1,"cost":{"total":0.5}},"timestamp":1767225601000}"#),
            row(r#"{"role":"toolResult","toolCallId":"c","content":[null],"timestamp":1767225602000}"#),
        ]),
        ("assistant-first", vec![
            row(r#"{"role":"assistant","content":"a","timestamp":1}"#),
            user(r#"[{"type":"text","text":""},{"type":"text","text":"u"}]"#),
        ]),
        ("escapes", vec![
            user(r#""a\nb\"c\\d\/e\bf\fg\rh\ti\u00e9j\ud83d\ude00k\ud800l\udc00m\ud800\u0041n\uD83D\uDE00o\ud800""#),
            user(r#"[{"type":"\u0074ext","text":"x\u0000y"},{"typ\u0065":"text","t\u0065xt":"z"}]"#),
        ]),
        ("escaped-keys", vec![
            r#"{"type":"message","id":"e","parentId":null,"time\u0073tamp":"2026-01-02T00:00:00.000Z","m\u0065ssage":{"role":"user","\u0063ontent":"k"}}"#.to_owned(),
        ]),
        ("dup-message", vec![
            r#"{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"first","timestamp":9},"message":{"role":"user","timestamp":8}}"#.to_owned(),
            r#"{"type":"message","id":"b","parentId":null,"message":{"role":"user"},"message":{"role":"assistant","content":"second"}}"#.to_owned(),
        ]),
        ("dup-content", vec![
            row(r#"{"role":"user","content":null,"content":"ok","timestamp":3}"#),
            row(r#"{"role":"user","content":"ok","content":[{"type":"text","text":"last"}],"timestamp":3,"timestamp":"x"}"#),
            row(r#"{"role":"user","content":[{"type":"text","text":"a","text":"b","type":"thinking"}]}"#),
        ]),
        ("dup-content-throws", vec![
            row(r#"{"role":"user","content":"ok","content":null}"#),
        ]),
        ("odd-texts", vec![
            user(r#"[{"type":"text","text":1e21},{"type":"text"},{"type":"text","text":null},{"type":"text","text":[null,true,1.5,[2,[3]]]},{"type":"text","text":{"a":1}},{"type":"text","text":false},{"type":"text","text":-0}]"#),
            user(r#"[1,"s",[null],true,{"text":"no type"},{"type":5,"text":"num type"},{"type":"Text","text":"case"}]"#),
        ]),
        ("content-number", vec![user("5")]),
        ("content-object", vec![user(r#"{"type":"text","text":"x"}"#)]),
        ("content-true", vec![user("true")]),
        ("content-null", vec![user("null")]),
        ("content-null-block", vec![user(r#"[{"type":"text","text":"x"},null]"#)]),
        ("toolresult-null-block", vec![row(r#"{"role":"toolResult","content":[null]}"#), user(r#""q""#)]),
        ("roles", vec![
            row(r#"{"role":"User","content":"x"}"#),
            row(r#"{"role":5,"content":"x"}"#),
            row(r#"{"role":null,"content":"x"}"#),
            row(r#"{"content":"x"}"#),
            row(r#"{"role":"\ud800","content":"x"}"#),
            row(r#"{"role":"us\u0065r","content":"escaped role","timestamp":4}"#),
            row(r#"{"role":"user","role":"system","content":"x"}"#),
            row(r#"{"role":"system","role":"assistant","content":"last role wins"}"#),
        ]),
        ("message-number", vec![row("5"), user(r#""q""#)]),
        ("message-string", vec![row(r#""user""#), user(r#""q""#)]),
        ("message-array", vec![row("[1]"), user(r#""q""#)]),
        ("message-null", vec![row("null")]),
        ("message-missing", vec![r#"{"type":"message","id":"m","parentId":null}"#.to_owned()]),
        ("message-object-then-null", vec![r#"{"type":"message","id":"m","message":{"role":"user","content":"x"},"message":null}"#.to_owned()]),
        ("times", vec![
            row(r#"{"role":"user","content":"a","timestamp":1e300}"#),
            row(r#"{"role":"user","content":"b","timestamp":-5}"#),
        ]),
        ("times2", vec![
            row(r#"{"role":"user","content":"a","timestamp":"1767225600000"}"#),
            row(r#"{"role":"user","content":"b","timestamp":null}"#),
            row(r#"{"role":"user","content":"c","timestamp":1.5e3}"#),
        ]),
        ("times3", vec![
            r#"{"type":"message","id":"t","timestamp":"not a date","message":{"role":"user","content":"a"}}"#.to_owned(),
            r#"{"type":"message","id":"t","timestamp":5,"message":{"role":"user","content":"b"}}"#.to_owned(),
            r#"{"type":"message","id":"t","timestamp":"2026-03-01","message":{"role":"assistant","content":"c"}}"#.to_owned(),
            r#"{"type":"message","id":"t","timestamp":"2026-03-0\u0032T00:00:00Z","message":{"role":"assistant","content":"d"}}"#.to_owned(),
        ]),
        ("times4", vec![
            r#"{"type":"message","id":"t","timestamp":"2026-03-01T00:00:00Z","message":{"role":"user","content":"a","timestamp":0}}"#.to_owned(),
            r#"{"type":"message","id":"t","timestamp":"2026-03-01T00:00:00Z","message":{"role":"user","content":"a","timestamp":1e400}}"#.to_owned(),
        ]),
        ("no-content-no-time", vec![
            row(r#"{"role":"user","timestamp":1767225609999}"#),
        ]),
        ("whitespace", vec![
            " { \"type\" : \"message\" ,\t\"id\":\"w\" , \"message\" : { \"role\" : \"user\" , \"content\" : [ { \"type\" : \"text\" , \"text\" : \"spaced\" } , { \"type\":\"text\",\"text\" : 12 } ] , \"timestamp\" : 7 } }\r".to_owned(),
        ]),
        ("names", vec![
            r#"{"type":"session_info","id":"n1","name":"  first  "}"#.to_owned(),
            user(r#""q""#),
            r#"{"type":"session_info","id":"n2","name":"\u00a0second\n"}"#.to_owned(),
        ]),
        ("name-cleared", vec![
            r#"{"type":"session_info","id":"n1","name":"x"}"#.to_owned(),
            r#"{"type":"session_info","id":"n2","name":"   "}"#.to_owned(),
        ]),
        ("name-null", vec![r#"{"type":"session_info","id":"n1","name":null}"#.to_owned()]),
        ("name-number", vec![r#"{"type":"session_info","id":"n1","name":5}"#.to_owned()]),
        ("odd-lines", vec![
            "not json".to_owned(),
            String::new(),
            "   ".to_owned(),
            "123".to_owned(),
            "[1,2]".to_owned(),
            r#""str""#.to_owned(),
            "true".to_owned(),
            r#"{"type":"message","id":"x","message":{"role":"user","content":"torn"#.to_owned(),
            user(r#""after""#),
        ]),
        ("null-line", vec![user(r#""q""#), "null".to_owned()]),
        ("deep-skip", vec![deep_skip]),
        ("deep-content", vec![deep_content]),
        ("shallow-braces", vec![shallow_braces]),
        ("just-deep-enough", vec![just_deep_enough]),
        ("empty-texts", vec![user(r#""""#), user("[]"), user(r#"[{"type":"image","data":"x"}]"#)]),
    ];
    let mut out: Vec<(String, Vec<u8>)> = rows
        .into_iter()
        .map(|(name, rows)| {
            let mut text = String::from(H);
            for r in rows {
                text.push('\n');
                text.push_str(&r);
            }
            text.push('\n');
            (name.to_owned(), text.into_bytes())
        })
        .collect();
    // Raw invalid UTF-8 in a text, a key and a type.
    let mut bad = format!("{H}\n").into_bytes();
    bad.extend_from_slice(b"{\"type\":\"message\",\"id\":\"b\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\xff\xfeb\xe6\x97\\n\xe6c\"},{\"type\":\"te\xffxt\",\"text\":\"no\"},{\"t\xffype\":\"text\"}]}}\n");
    bad.extend_from_slice(b"{\"type\":\"message\",\"id\":\"c\",\"message\":{\"role\":\"user\",\"cont\xc3\xa9nt\":\"no\",\"content\":\"\xed\xa0\x80x\"}}\n");
    out.push(("invalid-utf8".to_owned(), bad));
    // Header variants.
    for (name, header) in [
        (
            "header-numeric-id",
            H.replace(
                r#""id":"0195f000-0000-7000-8000-000000000001""#,
                r#""id":5e-7"#,
            ),
        ),
        (
            "header-bool-id",
            H.replace(
                r#""id":"0195f000-0000-7000-8000-000000000001""#,
                r#""id":true"#,
            ),
        ),
        (
            "header-object-id",
            H.replace(
                r#""id":"0195f000-0000-7000-8000-000000000001""#,
                r#""id":{}"#,
            ),
        ),
        (
            "header-odd-fields",
            H.replace(
                r#""cwd":"/home/dev/project""#,
                r#""cwd":7,"parentSession":"/p/a.jsonl""#,
            ),
        ),
        (
            "header-bad-time",
            H.replace("2026-01-01T00:00:00.000Z", "nope"),
        ),
        (
            "header-numeric-time",
            H.replace(r#""2026-01-01T00:00:00.000Z""#, "1767225600000"),
        ),
        (
            "header-not-session",
            H.replace(r#""type":"session""#, r#""type":"sessions""#),
        ),
        (
            "header-dup-type",
            H.replace(
                r#""type":"session""#,
                r#""type":"session","type":"message""#,
            ),
        ),
        ("header-bom", format!("\u{feff}  {H}")),
    ] {
        let text = format!("{header}\n{}\n \u{a0}", user(r#""q""#));
        out.push((name.to_owned(), text.into_bytes()));
    }
    out.push(("empty".to_owned(), Vec::new()));
    out.push(("blank".to_owned(), b"\n \n".to_vec()));
    out.push(("header-only".to_owned(), format!("{H}\n").into_bytes()));
    out.push((
        "garbage-first".to_owned(),
        format!("garbage\n{H}\n{}\n", user(r#""late header""#)).into_bytes(),
    ));
    out
}

/// Every hand-made case: the scan equals the full parse, and the cases reach the outcomes they
/// were written for (so the comparison is not vacuous).
#[test]
fn targeted_scan_matches_full_parse_on_edge_cases() {
    let dir = tempfile::tempdir().unwrap();
    let mut by_name = std::collections::BTreeMap::new();
    for (name, bytes) in edge_cases() {
        let path = dir.path().join(format!("{name}.jsonl"));
        plant(&path, &bytes);
        by_name.insert(name, check(&path));
    }
    let get = |n: &str| by_name[n].as_ref();
    let plain = get("plain").unwrap();
    assert_eq!(plain.message_count, 3);
    assert_eq!(plain.first_message, "hello");
    assert_eq!(plain.all_messages_text().unwrap(), "hello a1 a2");
    assert_eq!(plain.modified, 1_767_225_601_000.0);
    assert_eq!(get("assistant-first").unwrap().first_message, " u");
    assert_eq!(
        get("escapes").unwrap().first_message,
        "a\nb\"c\\d/e\u{8}f\u{c}g\rh\ti\u{e9}j\u{1f600}k\u{fffd}l\u{fffd}m\u{fffd}An\u{1f600}o\u{fffd}"
    );
    assert_eq!(
        get("escapes").unwrap().all_messages_text().unwrap(),
        format!("{} x\u{0}y z", get("escapes").unwrap().first_message)
    );
    let esc = get("escaped-keys").unwrap();
    assert_eq!(
        (esc.first_message.as_str(), esc.modified),
        ("k", 1_767_312_000_000.0)
    );
    let dup = get("dup-message").unwrap();
    assert_eq!(dup.all_messages_text().unwrap(), "second");
    assert_eq!(
        get("dup-content").unwrap().all_messages_text().unwrap(),
        "ok last"
    );
    assert!(get("dup-content-throws").is_none());
    assert_eq!(
        get("odd-texts").unwrap().first_message,
        "1e+21   ,true,1.5,2,3 [object Object] false 0"
    );
    for n in [
        "content-number",
        "content-object",
        "content-true",
        "content-null",
    ] {
        assert!(get(n).is_none(), "{n}");
    }
    assert!(get("content-null-block").is_none());
    assert_eq!(get("toolresult-null-block").unwrap().message_count, 2);
    let roles = get("roles").unwrap();
    assert_eq!(
        roles.all_messages_text().unwrap(),
        "escaped role last role wins"
    );
    assert_eq!(roles.modified, 1_767_225_601_000.0);
    for n in ["message-number", "message-string", "message-array"] {
        assert_eq!(get(n).unwrap().all_messages_text().unwrap(), "q", "{n}");
    }
    for n in [
        "message-null",
        "message-missing",
        "message-object-then-null",
        "null-line",
    ] {
        assert!(get(n).is_none(), "{n}");
    }
    assert!(get("times").unwrap().modified.is_nan());
    assert_eq!(get("times2").unwrap().modified, 1_767_225_601_000.0);
    assert_eq!(get("times3").unwrap().modified, 1_772_409_600_000.0);
    assert!(get("times4").unwrap().modified.is_nan());
    assert_eq!(
        get("no-content-no-time").unwrap().modified,
        1_767_225_600_000.0
    );
    assert_eq!(get("whitespace").unwrap().first_message, "spaced 12");
    assert_eq!(get("names").unwrap().name.as_deref(), Some("second"));
    assert_eq!(get("name-cleared").unwrap().name, None);
    assert_eq!(get("name-null").unwrap().name, None);
    assert!(get("name-number").is_none());
    let odd = get("odd-lines").unwrap();
    assert_eq!(
        (odd.message_count, odd.first_message.as_str()),
        (1, "after")
    );
    assert!(get("deep-skip").is_none(), "too deep for parse_value");
    assert!(get("deep-content").is_none(), "too deep for parse_value");
    assert_eq!(get("shallow-braces").unwrap().modified, 5.0);
    assert_eq!(get("just-deep-enough").unwrap().first_message, "1");
    assert_eq!(get("empty-texts").unwrap().first_message, "(no messages)");
    assert_eq!(
        get("invalid-utf8").unwrap().all_messages_text().unwrap(),
        "a\u{fffd}\u{fffd}b\u{fffd}\n\u{fffd}c \u{fffd}\u{fffd}\u{fffd}x"
    );
    assert_eq!(get("header-numeric-id").unwrap().id, "5e-7");
    assert_eq!(get("header-bool-id").unwrap().id, "true");
    assert_eq!(get("header-object-id").unwrap().id, "");
    assert!(get("header-bad-time").unwrap().created.is_none());
    assert!(get("header-not-session").is_none());
    assert!(get("header-dup-type").is_none());
    assert_eq!(get("header-bom").unwrap().first_message, "q");
    assert!(get("empty").is_none() && get("blank").is_none());
    assert_eq!(get("garbage-first").unwrap().first_message, "late header");
    assert_eq!(get("header-only").unwrap().message_count, 0);
    // The whole directory: same infos, same order.
    assert_same_list(list(dir.path()).unwrap(), list_full_parse(dir.path()));
}

/// A tiny deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

fn ws(r: &mut Rng) -> &'static str {
    ["", "", "", " ", "\t", " \r "][r.below(6)]
}

fn key(r: &mut Rng, name: &str) -> String {
    if r.below(8) == 0 {
        // Escape the first letter.
        let mut chars = name.chars();
        let first = chars.next().unwrap();
        format!("\"\\u{:04x}{}\"", u32::from(first), chars.as_str())
    } else {
        format!("\"{name}\"")
    }
}

fn text(r: &mut Rng) -> String {
    let parts = [
        "a",
        "é",
        "\\n",
        "\\\"",
        "\\\\",
        "\\/",
        "\\ud83d\\ude00",
        "\\ud800",
        "\\udc00",
        "日本",
        "\\u0041",
        " ",
        "😀",
        "\\t",
        "{",
        "]",
    ];
    let n = r.below(6);
    let mut s = String::from("\"");
    for _ in 0..n {
        s.push_str(r.pick(&parts));
    }
    s.push('"');
    s
}

fn scalar(r: &mut Rng) -> String {
    match r.below(7) {
        0 => "null".to_owned(),
        1 => "true".to_owned(),
        2 => r
            .pick(&["0", "-1.5e3", "1767225600000", "1e300", "-0"])
            .to_owned(),
        3 => "[1,[\"x\",{}],null]".to_owned(),
        4 => "{\"a\":{\"b\":[\"}\"]}}".to_owned(),
        _ => text(r),
    }
}

fn object(r: &mut Rng, members: Vec<(String, String)>) -> String {
    let mut s = format!("{{{}", ws(r));
    for (i, (k, v)) in members.iter().enumerate() {
        if i > 0 {
            s.push_str(&format!("{},{}", ws(r), ws(r)));
        }
        s.push_str(&format!("{k}{}:{}{v}", ws(r), ws(r)));
    }
    s.push_str(ws(r));
    s.push('}');
    s
}

fn block(r: &mut Rng) -> String {
    match r.below(10) {
        0 => scalar(r),
        _ => {
            let mut m = Vec::new();
            for _ in 0..r.below(4) + 1 {
                match r.below(4) {
                    0 | 1 => {
                        let t = r.pick(&[
                            "\"text\"",
                            "\"text\"",
                            "\"thinking\"",
                            "\"\\u0074ext\"",
                            "5",
                        ]);
                        m.push((key(r, "type"), t.to_owned()));
                    }
                    2 => m.push((
                        key(r, "text"),
                        if r.below(4) == 0 { scalar(r) } else { text(r) },
                    )),
                    _ => m.push((key(r, "data"), scalar(r))),
                }
            }
            object(r, m)
        }
    }
}

fn content(r: &mut Rng) -> String {
    match r.below(8) {
        0 => scalar(r),
        1 | 2 => text(r),
        _ => {
            let n = r.below(4);
            let blocks: Vec<String> = (0..n).map(|_| block(r)).collect();
            format!("[{}]", blocks.join(","))
        }
    }
}

fn message(r: &mut Rng) -> String {
    if r.below(12) == 0 {
        return scalar(r);
    }
    let mut m = Vec::new();
    for _ in 0..r.below(5) + 1 {
        match r.below(5) {
            0 | 1 => {
                let role = r.pick(&[
                    "\"user\"",
                    "\"user\"",
                    "\"assistant\"",
                    "\"toolResult\"",
                    "5",
                    "\"\\u0075ser\"",
                ]);
                m.push((key(r, "role"), role.to_owned()));
            }
            2 => m.push((key(r, "content"), content(r))),
            3 => m.push((key(r, "timestamp"), scalar(r))),
            _ => m.push((key(r, "usage"), scalar(r))),
        }
    }
    object(r, m)
}

fn line(r: &mut Rng) -> String {
    match r.below(20) {
        0 => {
            let name = if r.below(3) == 0 { scalar(r) } else { text(r) };
            let mut m = vec![
                (key(r, "type"), "\"session_info\"".to_owned()),
                (key(r, "name"), name),
            ];
            if r.below(4) == 0 {
                m.push((key(r, "name"), text(r)));
            }
            return object(r, m);
        }
        1 => return scalar(r),
        _ => {}
    }
    let mut m = vec![(key(r, "type"), "\"message\"".to_owned())];
    for _ in 0..r.below(4) + 1 {
        match r.below(4) {
            0 | 1 => m.push((key(r, "message"), message(r))),
            2 => {
                let t = r.pick(&["\"2026-02-03T04:05:06.007Z\"", "\"bad\"", "5", "null"]);
                m.push((key(r, "timestamp"), t.to_owned()));
            }
            _ => m.push((key(r, "id"), text(r))),
        }
    }
    let n = m.len();
    m.swap(0, r.below(n));
    object(r, m)
}

fn header(r: &mut Rng) -> String {
    let mut m = vec![(key(r, "type"), "\"session\"".to_owned())];
    for _ in 0..r.below(5) + 1 {
        match r.below(5) {
            0 => m.push((key(r, "id"), scalar(r))),
            1 => m.push((key(r, "cwd"), scalar(r))),
            2 => m.push((key(r, "parentSession"), scalar(r))),
            3 => {
                let t = r.pick(&[
                    "\"2026-02-03T04:05:06.007Z\"",
                    "\"bad\"",
                    "5",
                    "null",
                    "true",
                ]);
                m.push((key(r, "timestamp"), t.to_owned()));
            }
            _ => m.push((
                key(r, "type"),
                r.pick(&["\"session\"", "\"session\"", "\"message\"", "1"])
                    .to_owned(),
            )),
        }
    }
    object(r, m)
}

/// Generated rows (random shapes, duplicate and escaped keys, odd values, whitespace): the scan
/// equals the full parse on every file, and `list` keeps the full parse's order.
#[test]
fn targeted_scan_matches_full_parse_on_generated_rows() {
    let dir = tempfile::tempdir().unwrap();
    let mut listed = 0;
    for seed in 1..=1500u64 {
        let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut text = header(&mut r);
        for _ in 0..r.below(6) + 1 {
            text.push('\n');
            text.push_str(&line(&mut r));
        }
        text.push('\n');
        let path = dir.path().join(format!("g{seed:04}.jsonl"));
        plant(&path, text.as_bytes());
        if check(&path).is_some() {
            listed += 1;
        }
    }
    // Both outcomes are exercised.
    assert!((300..1400).contains(&listed), "{listed} of 1500 listed");
    assert_same_list(list(dir.path()).unwrap(), list_full_parse(dir.path()));
}

/// The files the conformance scripts write (`writeFile` ops of this workspace's corpus and of
/// the shared samples) and the fixture files.
#[test]
fn targeted_scan_matches_full_parse_on_conformance_files() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut script_dirs = vec![root.join("tests/conformance/scripts")];
    // Without the shared folder only this workspace's scripts run (the skip is recorded).
    if let Some(shared) = session_test_support::shared_dir(
        "targeted_scan_matches_full_parse_on_conformance_files (the shared samples)",
    ) {
        script_dirs.push(shared.join("conformance/scripts"));
    }
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    for sd in script_dirs {
        let mut scripts: Vec<PathBuf> = std::fs::read_dir(&sd)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        scripts.sort();
        for s in scripts {
            let v = session_format::json::parse_value(&std::fs::read(&s).unwrap()).unwrap();
            for op in v.get("ops").unwrap().as_array().unwrap() {
                if op.get("op").and_then(|o| o.as_str_lossy()).as_deref() != Some("writeFile") {
                    continue;
                }
                let content = op.get("content").unwrap().as_js_string().unwrap();
                n += 1;
                let path = dir.path().join(format!("w{n:04}.jsonl"));
                plant(&path, content.to_str_lossy().as_bytes());
                check(&path);
            }
        }
    }
    assert!(n >= 800, "only {n} writeFile ops found");
    let mut fixtures = 0;
    let fixture_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for f in jsonl_files(&fixture_dir).unwrap() {
        check(&f);
        fixtures += 1;
    }
    assert!(fixtures >= 5);
    assert_same_list(list(dir.path()).unwrap(), list_full_parse(dir.path()));
}

/// The benchmark store (`cargo xtask bench-data sessions10k`, 10,000 generated sessions), when
/// it has been generated: every file, and the list order. `list_all` over its parent folder
/// structure is covered by a copy of a few files in two folders.
#[test]
fn targeted_scan_matches_full_parse_on_the_bench_store() {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-data");
    let store = std::fs::read_dir(&data).ok().and_then(|rd| {
        let mut dirs: Vec<PathBuf> = rd
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.is_dir()
                    && p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("sessions10k-g"))
            })
            .collect();
        dirs.sort();
        dirs.pop()
    });
    let Some(store) = store else {
        session_test_support::skip(
            "targeted_scan_matches_full_parse_on_the_bench_store",
            format_args!(
                "no sessions10k-g* under {} (run `cargo xtask bench-data sessions10k`)",
                data.display()
            ),
        );
        return;
    };
    let files = jsonl_files(&store).unwrap();
    let mut with_name = 0;
    for f in &files {
        if check(f).is_some_and(|i| i.name.is_some()) {
            with_name += 1;
        }
    }
    assert!(with_name > 0);
    let new = list(&store).unwrap();
    assert_eq!(new.len(), files.len());
    assert_same_list(new, list_full_parse(&store));
    // list_all: two agent folders holding a few of the files each.
    let root = tempfile::tempdir().unwrap();
    let mut old = Vec::new();
    for (d, part) in [("a", &files[..40]), ("b", &files[40..90])] {
        let sub = root.path().join(d);
        std::fs::create_dir(&sub).unwrap();
        for f in part {
            let to = sub.join(f.file_name().unwrap());
            plant(&to, &std::fs::read(f).unwrap());
        }
        old.extend(
            jsonl_files(&sub)
                .unwrap()
                .iter()
                .filter_map(|p| session_info_full_parse(p).map(|(info, _)| info)),
        );
    }
    sort_by_modified(&mut old);
    assert_same_list(list_all(root.path()).unwrap(), old);
}

/// The file list (normalised directory joined with each name, sorted) equals the one built by
/// normalising every joined path and sorting the paths, for the spellings of a directory.
#[test]
fn file_list_matches_normalised_joined_paths() {
    let tmp = tempfile::tempdir().unwrap();
    let sub = tmp.path().join("s");
    std::fs::create_dir(&sub).unwrap();
    for name in [
        "b.jsonl",
        "a.jsonl",
        "A.jsonl",
        "a.jsonl.bak",
        "..jsonl",
        "é.jsonl",
        "x.txt",
    ] {
        plant(&sub.join(name), b"");
    }
    let old = |dir: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
            .map(|e| crate::paths::normalize(&e.path()))
            .collect();
        v.sort();
        v
    };
    // `cargo test` runs the tests in the crate's folder, where the relative spellings point.
    let spellings = [
        sub.clone(),
        sub.join("."),
        sub.join("../s/"),
        tmp.path().join("./s/./"),
        PathBuf::from("tests/fixtures"),
        PathBuf::from("./tests/fixtures/"),
        PathBuf::from("tests/../tests/fixtures"),
    ];
    for dir in spellings {
        let new = jsonl_files(&dir).unwrap();
        assert_eq!(new, old(&dir), "{}", dir.display());
        assert!(!new.is_empty(), "{}", dir.display());
    }
    assert_eq!(
        jsonl_files(&sub)
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect::<Vec<_>>(),
        ["..jsonl", "A.jsonl", "a.jsonl", "b.jsonl", "é.jsonl"]
    );
}

/// A session without message times or a valid header timestamp takes `modified` from the
/// `fstat` of the handle [`InfoReader`] read it through (node's rounded mtime, as
/// [`session_info`] takes it from a `stat` of the path); a FIFO is refused without blocking,
/// and a missing file is `NotFound`.
#[cfg(unix)]
#[test]
fn info_reader_takes_the_mtime_fallback_from_its_handle_and_refuses_fifos() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("untimed.jsonl");
    plant(
        &path,
        b"{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"cwd\":\"/w\"}\n",
    );
    let mtime = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(1_767_225_600_123_500_000);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let mut r = InfoReader::new();
    let (meta, info) = r.read(&path).unwrap();
    let info = info.unwrap();
    assert_eq!(meta.len(), 52);
    assert!(info.modified_from_mtime);
    assert_eq!(info.modified, 1_767_225_600_124.0);
    assert_eq!(info.first_message, "(no messages)");
    assert_eq!(exact(Some(info)), exact(session_info(&path)));

    let fifo = dir.path().join("pipe.jsonl");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let kind = |e: std::io::Error| e.kind();
    assert_eq!(
        r.read(&fifo).map(|_| ()).map_err(kind),
        Err(std::io::ErrorKind::InvalidInput)
    );
    assert_eq!(
        r.read(&dir.path().join("gone.jsonl"))
            .map(|_| ())
            .map_err(kind),
        Err(std::io::ErrorKind::NotFound)
    );
}
