//! `cargo xtask gen`: a deterministic, realistic transcript generator (user / assistant /
//! toolResult turns with tool calls, usage and cost numbers, unicode text, branch points,
//! labels and compactions).

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use session_format::build::{self, RowBase};
use session_format::json::{JsValue, parse_value, to_json_string};

/// Arguments of `cargo xtask gen`.
#[derive(Debug, clap::Args)]
pub struct GenArgs {
    /// Target size, e.g. `200MB`, `1MB`, `512KB` (the file stops at the first line past it).
    #[arg(long, default_value = "1MB")]
    pub size: String,
    /// Fraction of turns that start a new branch from an earlier entry.
    #[arg(long, default_value_t = 0.01)]
    pub branch_rate: f64,
    /// PRNG seed; the same seed gives the same bytes.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output file.
    #[arg(short, long)]
    pub output: PathBuf,
}

/// Parses `200MB`, `1.5GB`, `512KB`, `1000` (bytes).
pub fn parse_size(s: &str) -> Result<u64> {
    let s = s.trim();
    let (num, mult) = [
        ("GB", 1_000_000_000u64),
        ("MB", 1_000_000),
        ("KB", 1_000),
        ("B", 1),
    ]
    .iter()
    .find_map(|(suffix, m)| s.strip_suffix(suffix).map(|n| (n, *m)))
    .unwrap_or((s, 1));
    let n: f64 = num
        .trim()
        .parse()
        .with_context(|| format!("bad size {s:?}"))?;
    if !(n.is_finite() && n > 0.0) {
        bail!("size must be positive: {s:?}");
    }
    Ok((n * mult as f64) as u64)
}

/// splitmix64: small, fast, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    fn hex8(&mut self) -> String {
        format!("{:08x}", self.next() as u32)
    }
}

const WORDS: &[&str] = &[
    "the",
    "session",
    "file",
    "branch",
    "tool",
    "result",
    "compile",
    "error",
    "fix",
    "test",
    "naïve",
    "café",
    "→",
    "✓",
    "日本語",
    "emoji 😀",
    "über",
    "line\nbreak",
    "tab\there",
    "quote \"x\"",
    "path/to/file.rs",
    "λ",
    "Ω",
    "∑",
    "done",
    "wait",
    "retry",
    "ok",
];

fn text(rng: &mut Rng, words: u64) -> String {
    (0..words)
        .map(|_| WORDS[rng.below(WORDS.len() as u64) as usize])
        .collect::<Vec<_>>()
        .join(" ")
}

fn js(text: &str) -> JsValue {
    parse_value(text.as_bytes()).unwrap_or(JsValue::Null)
}

/// Writes the transcript; returns (lines, bytes).
pub fn generate(args: &GenArgs) -> Result<(u64, u64)> {
    let target = parse_size(&args.size)?;
    let mut rng = Rng(args.seed);
    // Built in memory, then written atomically through the workspace's one write module.
    let mut out: Vec<u8> = Vec::with_capacity(usize::try_from(target).unwrap_or(0) + (1 << 20));
    let mut written = 0u64;
    let mut lines = 0u64;
    let mut ms: i64 = 1_767_225_600_000;
    let session_id = format!("0195f000-0000-7000-8000-{:012x}", args.seed);
    let iso = |ms: i64| session_format::time::to_iso_string(ms).unwrap_or_default();
    let mut emit = |v: &JsValue, written: &mut u64, lines: &mut u64| -> Result<()> {
        let line = to_json_string(v);
        out.write_all(line.as_bytes())?;
        out.write_all(b"\n")?;
        *written += line.len() as u64 + 1;
        *lines += 1;
        Ok(())
    };
    emit(
        &build::header(3, &session_id, &iso(ms), "/home/dev/project", None),
        &mut written,
        &mut lines,
    )?;
    let mut ids: Vec<String> = Vec::new();
    let mut parent: Option<String> = None;
    let mut turn = 0u64;
    while written < target {
        turn += 1;
        if !ids.is_empty() && rng.chance(args.branch_rate) {
            parent = Some(ids[rng.below(ids.len() as u64) as usize].clone());
        }
        let next =
            |rng: &mut Rng, ms: &mut i64, parent: &mut Option<String>, ids: &mut Vec<String>| {
                *ms += 1 + rng.below(4000) as i64;
                let id = rng.hex8();
                let base = RowBase {
                    id: id.clone(),
                    parent_id: parent.clone(),
                    timestamp: iso(*ms),
                };
                *parent = Some(id.clone());
                ids.push(id);
                base
            };
        let user = format!(
            r#"{{"role":"user","content":[{{"type":"text","text":{}}}],"timestamp":{ms}}}"#,
            to_json_string(&JsValue::from(text(&mut rng, 5 + rng_len(turn, 40))))
        );
        let b = next(&mut rng, &mut ms, &mut parent, &mut ids);
        emit(&build::message(&b, js(&user)), &mut written, &mut lines)?;
        let calls = rng.below(3);
        for call in 0..=calls {
            let input = 100 + rng.below(50_000);
            let output = 10 + rng.below(2_000);
            let cost_in = input as f64 * 3e-6;
            let cost_out = output as f64 * 1.5e-5;
            let tool = call < calls;
            let content = if tool {
                format!(
                    r#"[{{"type":"text","text":{}}},{{"type":"toolCall","id":"toolu_{}","name":"bash","arguments":{{"command":{}}}}}]"#,
                    to_json_string(&JsValue::from(text(&mut rng, 10))),
                    rng.hex8(),
                    to_json_string(&JsValue::from(format!("rg {}", text(&mut rng, 2))))
                )
            } else {
                format!(
                    r#"[{{"type":"text","text":{}}}]"#,
                    to_json_string(&JsValue::from({
                        let n = 20 + rng.below(200);
                        text(&mut rng, n)
                    }))
                )
            };
            let assistant = format!(
                r#"{{"role":"assistant","content":{content},"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{{"input":{input},"output":{output},"cacheRead":0,"cacheWrite":0,"totalTokens":{},"cost":{{"input":{},"output":{},"cacheRead":0,"cacheWrite":0,"total":{}}}}},"stopReason":"{}","timestamp":{ms}}}"#,
                input + output,
                to_json_string(&JsValue::Number(cost_in)),
                to_json_string(&JsValue::Number(cost_out)),
                to_json_string(&JsValue::Number(cost_in + cost_out)),
                if tool { "toolUse" } else { "stop" },
            );
            let b = next(&mut rng, &mut ms, &mut parent, &mut ids);
            emit(
                &build::message(&b, js(&assistant)),
                &mut written,
                &mut lines,
            )?;
            if tool {
                let result = format!(
                    r#"{{"role":"toolResult","toolCallId":"toolu_x","toolName":"bash","content":[{{"type":"text","text":{}}}],"isError":false,"timestamp":{ms}}}"#,
                    to_json_string(&JsValue::from({
                        let n = 50 + rng.below(1500);
                        text(&mut rng, n)
                    }))
                );
                let b = next(&mut rng, &mut ms, &mut parent, &mut ids);
                emit(&build::message(&b, js(&result)), &mut written, &mut lines)?;
            }
        }
        if turn.is_multiple_of(97) {
            let target_id = ids[ids.len() / 2].clone();
            let b = next(&mut rng, &mut ms, &mut parent, &mut ids);
            emit(
                &build::label(&b, &target_id, Some("checkpoint")),
                &mut written,
                &mut lines,
            )?;
        }
        if turn.is_multiple_of(500) {
            let kept = ids[ids.len().saturating_sub(20)].clone();
            let b = next(&mut rng, &mut ms, &mut parent, &mut ids);
            let details = js(r#"{"readFiles":["a.rs"],"modifiedFiles":["b.rs"]}"#);
            emit(
                &build::compaction(
                    &b,
                    &text(&mut rng, 200),
                    &kept,
                    150_000.0,
                    Some(details),
                    Some(false),
                ),
                &mut written,
                &mut lines,
            )?;
        }
    }
    session_store::io::atomic_rewrite(&args.output, &out)
        .with_context(|| format!("writing {}", args.output.display()))?;
    Ok((lines, written))
}

fn rng_len(turn: u64, max: u64) -> u64 {
    (turn * 7919) % max
}
