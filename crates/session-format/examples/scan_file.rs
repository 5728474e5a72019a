//! Envelope-scan throughput over one file, single thread: `scan_file FILE [fast|indexed|scalar]
//! [RUNS]` prints the best of RUNS (default 5) in MB/s. `fast` is the experimental clean-line walk
//! (`EnvelopeScanner::scan_fast`), then the indexed walk on refusal; `indexed` is
//! `EnvelopeScanner::scan` (the indexed walk),
//! `scalar` the byte-by-byte reference. For side-by-side runs under `perf stat -e cycles:u`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A measuring tool: fail loudly.

use std::time::Instant;

use session_format::json::EnvelopeScanner;
use session_format::line::lines;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: scan_file FILE [fast|indexed|scalar] [RUNS]");
    let mode = args.next().unwrap_or_else(|| "fast".to_owned());
    let runs: u32 = args.next().map_or(5, |r| r.parse().expect("RUNS"));
    let buf = std::fs::read(&path).expect("reading the file");
    let mut scanner = EnvelopeScanner::new();
    let mut best = f64::INFINITY;
    let mut ids = 0usize;
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        ids = 0;
        for line in lines(&buf) {
            let env = match mode.as_str() {
                "fast" => match scanner.scan_fast(line.bytes) {
                    Some(env) => Ok(env),
                    None => scanner.scan_indexed(line.bytes),
                },
                "indexed" => scanner.scan(line.bytes),
                _ => scanner.scan_scalar(line.bytes),
            };
            if let Ok(env) = env {
                ids += usize::from(env.id.is_present());
            }
        }
        best = best.min(start.elapsed().as_secs_f64());
    }
    println!(
        "{mode}: {} bytes, {ids} ids; best of {runs}: {:.4} s = {:.0} MB/s",
        buf.len(),
        best,
        buf.len() as f64 / best / 1e6
    );
}
