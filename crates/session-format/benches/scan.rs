//! Envelope-scan throughput, indexed (default) against the scalar reference: bytes per second
//! per core over one transcript, line framing included (`Throughput::Bytes`, single thread).
//!
//! Data: `$SESSION_BENCH_FILE` when set, else the 200 MB bench transcript
//! `target/bench-data/t200mb*.jsonl` (`cargo xtask bench-data t200mb`) when present, else a
//! generated in-memory corpus of about 20 MB (said on stderr).

use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use session_format::json::{EnvelopeScanner, JsValue, to_json_string};
use session_format::line::lines;

/// About 20 MB of transcript lines with escapes, quotes and non-ASCII text.
fn generated() -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0u64;
    while out.len() < 20_000_000 {
        let text = format!(
            "step {i}: ran `cargo test` → ok ✓\n\tline two \"quoted\" C:\\dir\\{} {}",
            i % 97,
            "x".repeat((i % 900) as usize)
        );
        let line = format!(
            r#"{{"type":"message","id":"{:08x}","parentId":"{:08x}","timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":{}}}],"usage":{{"input":{},"output":12}},"stopReason":"stop"}}}}"#,
            i + 1,
            i,
            to_json_string(&JsValue::from(text)),
            i * 7
        );
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
        i += 1;
    }
    out
}

/// The 200 MB bench transcript under the target directory, if it was generated.
fn bench_file() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SESSION_BENCH_FILE") {
        return Some(PathBuf::from(p));
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), |t| root.join(t));
    let dir = std::fs::read_dir(target.join("bench-data")).ok()?;
    let mut found: Vec<PathBuf> = dir
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("t200mb") && n.ends_with(".jsonl"))
        })
        .collect();
    found.sort();
    found.pop()
}

fn bench(c: &mut Criterion) {
    let buf = match bench_file() {
        Some(path) => {
            eprintln!("scan bench: {}", path.display());
            std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        }
        None => {
            eprintln!(
                "scan bench: no 200 MB bench transcript (SESSION_BENCH_FILE or target/bench-data/t200mb*.jsonl); using a generated ~20 MB corpus"
            );
            generated()
        }
    };
    let mut group = c.benchmark_group("scan");
    group.throughput(Throughput::Bytes(buf.len() as u64));
    group.sample_size(10);
    let mut scanner = EnvelopeScanner::new();
    group.bench_function("indexed", |b| {
        b.iter(|| {
            let mut ids = 0usize;
            for line in lines(&buf) {
                if let Ok(env) = scanner.scan(line.bytes) {
                    ids += usize::from(env.id.is_present());
                }
            }
            ids
        })
    });
    group.bench_function("scalar", |b| {
        b.iter(|| {
            let mut ids = 0usize;
            for line in lines(&buf) {
                if let Ok(env) = scanner.scan_scalar(line.bytes) {
                    ids += usize::from(env.id.is_present());
                }
            }
            ids
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
