//! `sessions usage --json`'s `timeZone`: `UTC` with `--utc`; else the IANA name of the local
//! zone (`TZ` when it names a zone of `/usr/share/zoneinfo`, a leading `:` or a path into it
//! allowed), else `local` (a POSIX rule, an unknown name); the days are those of that zone.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use serde_json::Value;

use crate::support::*;

#[test]
fn usage_json_names_the_time_zone() {
    let test = "usage_json_names_the_time_zone";
    if !std::path::Path::new("/usr/share/zoneinfo/Asia/Tokyo").is_file() {
        session_test_support::skip(test, "/usr/share/zoneinfo/Asia/Tokyo not found");
        return;
    }
    let t = tempdir();
    plant(
        &t.path().join("s.jsonl"),
        b"{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"cwd\":\"/\"}\n\
          {\"type\":\"message\",\"id\":\"a1\",\"parentId\":null,\"timestamp\":\"2026-06-01T20:00:00.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[],\"usage\":{\"input\":1}}}\n",
    );
    let usage = |tz: &str, utc: bool| {
        let mut c = cmd();
        c.current_dir(t.path())
            .env("TZ", tz)
            .args(["usage", "--json", "s.jsonl"]);
        if utc {
            c.arg("--utc");
        }
        let r = run_command_timeout(c, 30);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "TZ={tz}");
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        (
            v["timeZone"].as_str().unwrap().to_owned(),
            v["rows"][0]["key"].as_str().unwrap().to_owned(),
        )
    };
    let tokyo = ("Asia/Tokyo".to_owned(), "2026-06-02".to_owned());
    assert_eq!(usage("Asia/Tokyo", false), tokyo);
    assert_eq!(usage(":Asia/Tokyo", false), tokyo);
    assert_eq!(usage("/usr/share/zoneinfo/Asia/Tokyo", false), tokyo);
    assert_eq!(
        usage("Asia/Tokyo", true),
        ("UTC".to_owned(), "2026-06-01".to_owned())
    );
    assert_eq!(
        usage("JST-9", false),
        ("local".to_owned(), "2026-06-02".to_owned())
    );
    assert_eq!(usage("Nowhere/Atlantis", false).0, "local");
    assert_eq!(usage("../../etc/passwd", false).0, "local");
}
