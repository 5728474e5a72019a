//! Envelope-scan throughput (line framing, full JSON validation, `type`/`id`/`parentId`/role):
//! bytes per second over a transcript. Uses `$SESSION_BENCH_FILE` when set (e.g. a 200 MB file
//! from `cargo xtask gen --size 200MB -o FILE`), else a built-in 8 MB transcript.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use session_format::json::{JsValue, parse_value, to_json_string};
use session_format::{LineContent, LineReader};

fn builtin() -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0u64;
    while out.len() < 8_000_000 {
        let text = format!(
            "step {i}: ran `cargo test` → ok ✓\nline two \"quoted\" {}",
            "x".repeat((i % 900) as usize)
        );
        let line = format!(
            r#"{{"type":"message","id":"{:08x}","parentId":"{:08x}","timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":{}}}],"usage":{{"input":{},"output":12,"cost":{{"total":0.000021000000000000002}}}},"stopReason":"stop","timestamp":1767225600000}}}}"#,
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

fn bench(c: &mut Criterion) {
    let buf = match std::env::var_os("SESSION_BENCH_FILE") {
        Some(path) => std::fs::read(path).unwrap_or_else(|e| panic!("SESSION_BENCH_FILE: {e}")),
        None => builtin(),
    };
    let mut group = c.benchmark_group("envelope");
    group.throughput(Throughput::Bytes(buf.len() as u64));
    group.sample_size(10);
    group.bench_function("scan", |b| {
        b.iter(|| {
            let mut ids = 0usize;
            for line in LineReader::new(&buf) {
                if let LineContent::Json(env) = line.content {
                    ids += usize::from(env.id.is_present());
                }
            }
            ids
        })
    });
    let sample: Vec<u8> = buf.iter().take(2_000_000).copied().collect();
    group.throughput(Throughput::Bytes(sample.len() as u64));
    group.bench_function("full_parse_2MB", |b| {
        b.iter(|| {
            LineReader::new(&sample)
                .filter(|l| matches!(l.content, LineContent::Json(_)))
                .map(|l| parse_value(l.json).map(|_| 1usize).unwrap_or(0))
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
