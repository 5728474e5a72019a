//! `cargo xtask conformance`: runs the op-scripts of `tests/conformance/scripts/` through our
//! runner and compares each normalised output with the reference's golden file in
//! `tests/conformance/expected/<reference>/` (`--refresh` regenerates the goldens from the live
//! reference; `--live` also checks the live reference against the goldens).
//!
//! A difference is reported with the first differing JSON path (`[3].snapshot.file`), both values
//! (truncated) and whether `docs/DEVIATIONS.md` lists it. The listing convention (backquoted
//! `script-glob:path-glob` items in the second column of the `| D<n> |` rows) is described in
//! `xtask/conformance/README.md`.

use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, mpsc};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// Arguments of `cargo xtask conformance`.
#[derive(Debug, clap::Args)]
pub struct ConformanceArgs {
    /// Which reference's goldens to use (and which reference `--refresh`/`--live` run).
    #[arg(long, value_enum, default_value_t = Reference::Openclaw)]
    pub reference: Reference,
    /// One op-script, or a directory of `*.json` op-scripts [default: tests/conformance/scripts].
    #[arg(long, value_name = "FILE|DIR")]
    pub script: Option<PathBuf>,
    /// Directory holding one golden directory per reference
    /// [default: tests/conformance/expected].
    #[arg(long, value_name = "DIR")]
    pub expected: Option<PathBuf>,
    /// Regenerate the goldens of the selected scripts from the live reference (ours is not run).
    #[arg(long, conflicts_with = "live")]
    pub refresh: bool,
    /// Also run the live reference and report where it drifts from the goldens.
    #[arg(long)]
    pub live: bool,
    /// The deviation list [default: docs/DEVIATIONS.md].
    #[arg(long, value_name = "FILE")]
    pub deviations: Option<PathBuf>,
    /// Seconds after which one reference run (or `CONFORMANCE_OURS_CMD` run) is killed; a hung
    /// run is an error.
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
    /// Scripts run in parallel [default: the number of CPUs].
    #[arg(long)]
    pub jobs: Option<usize>,
}

/// A reference implementation with a golden directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Reference {
    /// OpenClaw 2026.6.11 (the reference this workspace must match).
    Openclaw,
    /// pi-coding-agent 0.73.1 (informational).
    Pi,
}

impl Reference {
    /// The name `runner.mjs --reference` and `install.sh` take.
    fn runner_name(self) -> &'static str {
        match self {
            Reference::Openclaw => "openclaw",
            Reference::Pi => "pi",
        }
    }

    /// The golden directory's name under `tests/conformance/expected/`.
    fn golden_dir(self) -> &'static str {
        match self {
            Reference::Openclaw => "openclaw-2026.6.11",
            Reference::Pi => "pi-0.73.1",
        }
    }
}

/// The repository root (the parent of this crate's directory).
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Entry point of `cargo xtask conformance`. Exits the process with status 1 when a difference
/// is not listed in `docs/DEVIATIONS.md` (or a run fails, a golden is missing, or `--live` finds
/// drift).
pub fn run(args: &ConformanceArgs) -> Result<()> {
    let root = repo_root();
    let script_arg = args
        .script
        .clone()
        .unwrap_or_else(|| root.join("tests/conformance/scripts"));
    let scripts = collect_scripts(&script_arg)?;
    let golden_dir = args
        .expected
        .clone()
        .unwrap_or_else(|| root.join("tests/conformance/expected"))
        .join(args.reference.golden_dir());
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(4, std::num::NonZeroUsize::get)
    });
    let timeout = Duration::from_secs(args.timeout.max(1));
    let _ = OURS_TIMEOUT.set(timeout);

    if args.refresh || args.live {
        install_reference(&root, args.reference)?;
    }
    if args.refresh {
        return refresh(&root, args.reference, &scripts, &golden_dir, jobs, timeout);
    }

    let deviations_path = args
        .deviations
        .clone()
        .unwrap_or_else(|| root.join("docs/DEVIATIONS.md"));
    let deviations = match std::fs::read_to_string(&deviations_path) {
        Ok(text) => parse_deviations(&text),
        Err(e) => {
            eprintln!(
                "note: cannot read {}: {e}; no deviation is listed",
                deviations_path.display()
            );
            Vec::new()
        }
    };

    let reports = parallel_map(&scripts, jobs, |script| {
        check_script(&root, args, script, &golden_dir, &deviations, timeout)
    });

    let mut summary = Summary::default();
    for report in &reports {
        print!("{}", report.text);
        summary.add(report.outcome, report.drift);
    }
    println!("{}", summary.line(args.live));
    if summary.failed() {
        std::process::exit(1);
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------------
// Scripts and goldens

/// The `*.json` files of a directory (sorted), or the one file given.
fn collect_scripts(path: &Path) -> Result<Vec<PathBuf>> {
    let meta = std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?;
    if meta.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out = Vec::new();
    for entry in std::fs::read_dir(path).with_context(|| format!("listing {}", path.display()))? {
        let p = entry?.path();
        if p.extension().is_some_and(|e| e == "json") && p.is_file() {
            out.push(p);
        }
    }
    out.sort();
    if out.is_empty() {
        bail!("no *.json op-scripts in {}", path.display());
    }
    Ok(out)
}

/// The script's name: its file name without `.json`.
fn script_name(script: &Path) -> String {
    script.file_stem().map_or_else(
        || script.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

/// `<golden_dir>/<name>.skip`: a golden that cannot exist (e.g. the reference does not
/// terminate). Its first line is the reason.
fn skip_reason(golden_dir: &Path, name: &str) -> Option<String> {
    let text = std::fs::read_to_string(golden_dir.join(format!("{name}.skip"))).ok()?;
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no reason given");
    Some(first.trim().to_owned())
}

// ------------------------------------------------------------------------------------------------
// Running the reference and ours

/// Installs (or checks) the pinned reference package with `xtask/conformance/install.sh`.
fn install_reference(root: &Path, reference: Reference) -> Result<()> {
    let script = root.join("xtask/conformance/install.sh");
    let status = Command::new("bash")
        .arg(&script)
        .arg(reference.runner_name())
        .current_dir(root)
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .status()
        .with_context(|| format!("running {} (is bash installed?)", script.display()))?;
    if !status.success() {
        bail!(
            "could not install the {} reference: {} failed (see its message above). \
             --refresh and --live need node, npm and a reachable npm registry; comparing against \
             the committed goldens needs neither",
            reference.runner_name(),
            script.display()
        );
    }
    let node = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !node.is_ok_and(|s| s.success()) {
        bail!(
            "`node` is not on PATH; the conformance runner (xtask/conformance/runner.mjs) needs it"
        );
    }
    Ok(())
}

/// Runs the live reference on one script (normalised output).
fn run_reference(
    root: &Path,
    reference: Reference,
    script: &Path,
    timeout: Duration,
) -> Result<String> {
    let mut cmd = Command::new("node");
    cmd.arg(root.join("xtask/conformance/runner.mjs"))
        .arg("--reference")
        .arg(reference.runner_name())
        .arg("--script")
        .arg(script)
        .current_dir(root);
    run_captured(cmd, timeout).with_context(|| format!("reference {}", reference.runner_name()))
}

/// The `--timeout` of this invocation, for commands run by [`run_ours`].
static OURS_TIMEOUT: OnceLock<Duration> = OnceLock::new();

/// Runs OUR runner on one script and returns its normalised output.
///
/// Runs one op-script through our `SessionManager` (`session_store::test_util::replay`) in a fresh,
/// canonicalised temporary directory and returns the normalised output.
///
/// For debugging the harness itself, `CONFORMANCE_OURS_CMD` replaces our runner by a command
/// (run through `sh -c` from the repository root with the script path appended) that prints a
/// normalised output, e.g. `node xtask/conformance/runner.mjs --reference pi --script`.
fn run_ours(script: &Path) -> Result<String> {
    if let Ok(cmd_line) = std::env::var("CONFORMANCE_OURS_CMD") {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("{cmd_line} \"$1\""))
            .arg("sh")
            .arg(script)
            .current_dir(repo_root());
        let timeout = OURS_TIMEOUT
            .get()
            .copied()
            .unwrap_or(Duration::from_secs(120));
        return run_captured(cmd, timeout).context("CONFORMANCE_OURS_CMD");
    }
    let bytes = std::fs::read(script).with_context(|| format!("reading {}", script.display()))?;
    let dir = tempfile::Builder::new()
        .prefix("sm-conformance-")
        .tempdir()
        .context("creating a temporary directory")?;
    let canonical = std::fs::canonicalize(dir.path())?;
    session_store::test_util::replay::run_script_normalized(
        session_store::FileStorage::shared(),
        &bytes,
        &canonical,
    )
    .with_context(|| {
        format!(
            "running {} through session_store::test_util::replay",
            script.display()
        )
    })
}

/// Spawns `cmd` in its own process group, collects stdout, and kills the whole group after
/// `timeout` (the openclaw runner re-executes itself under a second node binary, so killing
/// only the direct child could leave the real process running).
fn run_captured(mut cmd: Command, timeout: Duration) -> Result<String> {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        cmd.process_group(0);
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("spawning {:?}", cmd.get_program()))?;
    let (tx, rx) = mpsc::channel::<(bool, Vec<u8>)>();
    if let Some(pipe) = child.stdout.take() {
        spawn_reader(pipe, true, tx.clone());
    }
    if let Some(pipe) = child.stderr.take() {
        spawn_reader(pipe, false, tx.clone());
    }
    drop(tx);
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if Instant::now() >= deadline {
            kill_group(&mut child);
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // A descendant that escaped the process group could keep a pipe open: do not wait forever.
    let (mut out, mut err) = (None, Vec::new());
    let pipes_deadline = Instant::now() + Duration::from_secs(5);
    for _ in 0..2 {
        let left = pipes_deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((true, buf)) => out = Some(buf),
            Ok((false, buf)) => err = buf,
            Err(_) => break,
        }
    }
    let err_text = String::from_utf8_lossy(&err);
    let err_lines: Vec<&str> = err_text.lines().collect();
    let err_tail = err_lines[err_lines.len().saturating_sub(8)..].join("\n");
    match (status, out) {
        (None, _) => bail!("killed after {} s without finishing", timeout.as_secs()),
        (Some(s), _) if !s.success() => bail!("exited with {s}: {err_tail}"),
        (Some(_), None) => bail!("its output pipe stayed open after it exited"),
        (Some(_), Some(out)) => String::from_utf8(out).context("output is not UTF-8"),
    }
}

/// Reads `pipe` to its end on a thread and sends `(is_stdout, bytes)`.
fn spawn_reader(
    mut pipe: impl Read + Send + 'static,
    is_stdout: bool,
    tx: mpsc::Sender<(bool, Vec<u8>)>,
) {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        let _ = tx.send((is_stdout, buf));
    });
}

/// Kills the child's process group (unix) or the child.
fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        let _ = Command::new("kill")
            .args(["-KILL", "--"])
            .arg(format!("-{}", child.id()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    let _ = child.kill();
}

/// Runs `f` over `items` on `jobs` threads; results in input order.
fn parallel_map<T: Sync, R: Send>(items: &[T], jobs: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    if let Ok(mut guard) = slots[i].lock() {
                        *guard = Some(r);
                    }
                }
            });
        }
    });
    slots
        .into_iter()
        .filter_map(|m| m.into_inner().ok().flatten())
        .collect()
}

// ------------------------------------------------------------------------------------------------
// --refresh

fn refresh(
    root: &Path,
    reference: Reference,
    scripts: &[PathBuf],
    golden_dir: &Path,
    jobs: usize,
    timeout: Duration,
) -> Result<()> {
    std::fs::create_dir_all(golden_dir)
        .with_context(|| format!("creating {}", golden_dir.display()))?;
    let results = parallel_map(scripts, jobs, |script| {
        let name = script_name(script);
        if let Some(reason) = skip_reason(golden_dir, &name) {
            let msg = format!("skipped ({name}.skip): {reason}");
            return (name, Err(msg), true);
        }
        let out = run_reference(root, reference, script, timeout).map_err(|e| format!("{e:#}"));
        (name, out, false)
    });
    let (mut written, mut unchanged, mut skipped, mut failed) = (0, 0, 0, 0);
    for (name, out, skip) in results {
        match out {
            Err(msg) if skip => {
                skipped += 1;
                println!("skip       {name}: {msg}");
            }
            Err(msg) => {
                failed += 1;
                println!("FAILED     {name}: {msg}");
            }
            Ok(text) => {
                let path = golden_dir.join(format!("{name}.json"));
                let old = std::fs::read_to_string(&path).ok();
                if old.as_deref() == Some(text.as_str()) {
                    unchanged += 1;
                    println!("unchanged  {name}");
                } else {
                    write_golden(&path, &text)?;
                    written += 1;
                    println!(
                        "{}  {name}",
                        if old.is_some() {
                            "updated  "
                        } else {
                            "new      "
                        }
                    );
                }
            }
        }
    }
    println!(
        "refresh {}: scripts: {}, written: {written}, unchanged: {unchanged}, skipped: {skipped}, failed: {failed}",
        golden_dir.display(),
        scripts.len()
    );
    if failed > 0 {
        std::process::exit(1);
    }
    Ok(())
}

/// Writes a golden (a temporary file in the same directory, then a rename).
#[allow(clippy::disallowed_methods)] // test fixtures, not session files: no session_store::io here
fn write_golden(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))?;
    Ok(())
}

// ------------------------------------------------------------------------------------------------
// Comparison

/// How one script ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Equal,
    Listed,
    Unlisted,
    Error,
    Missing,
    Skipped,
}

#[derive(Debug)]
struct Report {
    outcome: Outcome,
    drift: bool,
    text: String,
}

fn check_script(
    root: &Path,
    args: &ConformanceArgs,
    script: &Path,
    golden_dir: &Path,
    deviations: &[Deviation],
    timeout: Duration,
) -> Report {
    let name = script_name(script);
    let golden_path = golden_dir.join(format!("{name}.json"));
    let mut text = String::new();
    let golden = match std::fs::read_to_string(&golden_path) {
        Ok(g) => g,
        Err(_) => {
            if let Some(reason) = skip_reason(golden_dir, &name) {
                let _ = writeln!(text, "skipped    {name}: {reason}");
                return Report {
                    outcome: Outcome::Skipped,
                    drift: false,
                    text,
                };
            }
            let _ = writeln!(
                text,
                "MISSING    {name}: no golden {} (run `cargo xtask conformance --refresh --reference {}`)",
                golden_path.display(),
                args.reference.runner_name()
            );
            return Report {
                outcome: Outcome::Missing,
                drift: false,
                text,
            };
        }
    };

    let outcome = match run_ours(script) {
        Err(e) => {
            let _ = writeln!(text, "ERROR      {name}: {e:#}");
            Outcome::Error
        }
        Ok(ours) => compare_ours(&name, &golden, &ours, deviations, &mut text),
    };

    let mut drift = false;
    if args.live {
        match run_reference(root, args.reference, script, timeout) {
            Err(e) => {
                drift = true;
                let _ = writeln!(text, "  DRIFT    live reference failed: {e:#}");
            }
            Ok(live) if live == golden => {}
            Ok(live) => {
                drift = true;
                let diffs = diff_texts(&golden, &live);
                match diffs.first() {
                    Some(d) => {
                        let _ = writeln!(
                            text,
                            "  DRIFT    live reference differs from the golden at {}",
                            d.path
                        );
                        write_values(&mut text, d, "golden", "live");
                    }
                    None => {
                        let _ = writeln!(text, "  DRIFT    live reference differs from the golden");
                    }
                }
            }
        }
    }
    Report {
        outcome,
        drift,
        text,
    }
}

fn compare_ours(
    name: &str,
    golden: &str,
    ours: &str,
    deviations: &[Deviation],
    text: &mut String,
) -> Outcome {
    if ours == golden {
        let _ = writeln!(text, "equal      {name}");
        return Outcome::Equal;
    }
    let diffs = diff_texts(golden, ours);
    let Some(first) = diffs.first() else {
        let _ = writeln!(
            text,
            "DIFFERS    {name}: outputs differ but no difference was located"
        );
        return Outcome::Unlisted;
    };
    let listed: Vec<Option<&str>> = diffs
        .iter()
        .map(|d| listing_for(deviations, name, &d.path))
        .collect();
    let first_unlisted = diffs
        .iter()
        .zip(&listed)
        .find(|(_, l)| l.is_none())
        .map(|(d, _)| d);
    let outcome = if first_unlisted.is_some() {
        Outcome::Unlisted
    } else {
        Outcome::Listed
    };
    let more = if diffs.len() > 1 {
        format!(
            " (+{} more differing path{})",
            diffs.len() - 1,
            if diffs.len() == 2 { "" } else { "s" }
        )
    } else {
        String::new()
    };
    match listed.first().copied().flatten() {
        Some(id) => {
            let tag = if outcome == Outcome::Listed {
                "LISTED   "
            } else {
                "DIFFERS  "
            };
            let _ = writeln!(text, "{tag}  {name}  {}  listed: {id}{more}", first.path);
        }
        None => {
            let _ = writeln!(text, "DIFFERS    {name}  {}  NOT LISTED{more}", first.path);
        }
    }
    write_values(text, first, "expected", "ours");
    if let Some(u) = first_unlisted.filter(|u| u.path != first.path) {
        let _ = writeln!(text, "           first unlisted difference: {}", u.path);
        write_values(text, u, "expected", "ours");
    }
    outcome
}

fn write_values(text: &mut String, d: &Difference, left: &str, right: &str) {
    let w = left.len().max(right.len());
    let _ = writeln!(text, "             {left:<w$}: {}", d.expected);
    let _ = writeln!(text, "             {right:<w$}: {}", d.actual);
}

/// One located difference: a JSON path and both sides, already rendered and truncated.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Difference {
    path: String,
    expected: String,
    actual: String,
}

/// At most this many differences are collected per script.
const MAX_DIFFS: usize = 200;

/// Locates the differences between two normalised outputs (expected first).
fn diff_texts(expected: &str, actual: &str) -> Vec<Difference> {
    let e: Result<Value, _> = serde_json::from_str(expected);
    let a: Result<Value, _> = serde_json::from_str(actual);
    let mut out = Vec::new();
    match (e, a) {
        (Ok(e), Ok(a)) => {
            diff_values(&e, &a, &mut String::new(), &mut out);
            if out.is_empty() && expected != actual {
                out.push(Difference {
                    path: "(formatting)".to_owned(),
                    expected: "the same JSON value, printed differently".to_owned(),
                    actual: first_text_difference(expected, actual),
                });
            }
        }
        (e, a) => out.push(Difference {
            path: "(not JSON)".to_owned(),
            expected: e
                .err()
                .map_or_else(|| "valid JSON".to_owned(), |err| format!("not JSON: {err}")),
            actual: a
                .err()
                .map_or_else(|| "valid JSON".to_owned(), |err| format!("not JSON: {err}")),
        }),
    }
    out
}

/// Walks both values in order (object keys in their printed order) and records every difference.
fn diff_values(e: &Value, a: &Value, path: &mut String, out: &mut Vec<Difference>) {
    if out.len() >= MAX_DIFFS {
        return;
    }
    match (e, a) {
        (Value::Object(eo), Value::Object(ao)) => {
            let ek: Vec<&str> = eo.keys().map(String::as_str).collect();
            let ak: Vec<&str> = ao.keys().map(String::as_str).collect();
            if ek != ak {
                out.push(Difference {
                    path: display_path(path),
                    expected: truncate(&format!("keys {}", render(&Value::from(ek.clone())))),
                    actual: truncate(&format!("keys {}", render(&Value::from(ak.clone())))),
                });
            }
            for (k, ev) in eo {
                if let Some(av) = ao.get(k) {
                    let len = path.len();
                    push_key(path, k);
                    diff_values(ev, av, path, out);
                    path.truncate(len);
                }
            }
        }
        (Value::Array(ea), Value::Array(aa)) => {
            for (i, (ev, av)) in ea.iter().zip(aa).enumerate() {
                let len = path.len();
                let _ = write!(path, "[{i}]");
                diff_values(ev, av, path, out);
                path.truncate(len);
            }
            if ea.len() != aa.len() {
                let i = ea.len().min(aa.len());
                let side = |v: &Vec<Value>| {
                    v.get(i).map_or_else(
                        || {
                            format!(
                                "(absent; {} element{})",
                                v.len(),
                                if v.len() == 1 { "" } else { "s" }
                            )
                        },
                        |x| truncate(&render(x)),
                    )
                };
                out.push(Difference {
                    path: format!("{path}[{i}]"),
                    expected: side(ea),
                    actual: side(aa),
                });
            }
        }
        (Value::String(es), Value::String(as_)) if es != as_ => {
            let (expected, actual) = string_difference(es, as_);
            out.push(Difference {
                path: display_path(path),
                expected,
                actual,
            });
        }
        _ if e != a => out.push(Difference {
            path: display_path(path),
            expected: truncate(&render(e)),
            actual: truncate(&render(a)),
        }),
        _ => {}
    }
}

fn display_path(path: &str) -> String {
    if path.is_empty() {
        "(root)".to_owned()
    } else {
        path.to_owned()
    }
}

/// Appends `.key`, or `["key"]` when the key is not an identifier.
fn push_key(path: &mut String, key: &str) {
    let ident = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ident {
        path.push('.');
        path.push_str(key);
    } else {
        path.push('[');
        path.push_str(&render(&Value::String(key.to_owned())));
        path.push(']');
    }
}

fn render(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "<unprintable>".to_owned())
}

/// Values longer than this are cut around the first difference.
const SHOW: usize = 160;

fn truncate(s: &str) -> String {
    if s.chars().count() <= SHOW {
        return s.to_owned();
    }
    let cut: String = s.chars().take(SHOW).collect();
    format!("{cut}…")
}

/// Renders two differing strings. Multi-line strings (a snapshot's `file`) show the first
/// differing line; long lines show a window around the first differing character.
fn string_difference(e: &str, a: &str) -> (String, String) {
    if e.contains('\n') || a.contains('\n') {
        let el: Vec<&str> = e.split('\n').collect();
        let al: Vec<&str> = a.split('\n').collect();
        let n = el.iter().zip(&al).take_while(|(x, y)| x == y).count();
        let line = |lines: &[&str]| match lines.get(n) {
            Some(l) => window(
                l,
                common_prefix_chars(
                    el.get(n).copied().unwrap_or(""),
                    al.get(n).copied().unwrap_or(""),
                ),
            ),
            None => "(no such line)".to_owned(),
        };
        return (
            format!("line {}: {}", n + 1, line(&el)),
            format!("line {}: {}", n + 1, line(&al)),
        );
    }
    let at = common_prefix_chars(e, a);
    (
        window(&render(&Value::String(e.to_owned())), at),
        window(&render(&Value::String(a.to_owned())), at),
    )
}

fn common_prefix_chars(x: &str, y: &str) -> usize {
    x.chars().zip(y.chars()).take_while(|(p, q)| p == q).count()
}

/// `s` cut to about [`SHOW`] characters around character `at`.
fn window(s: &str, at: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= SHOW {
        return s.to_owned();
    }
    let start = at.saturating_sub(SHOW / 3);
    let end = (start + SHOW).min(chars.len());
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.extend(&chars[start..end]);
    if end < chars.len() {
        out.push('…');
    }
    out
}

fn first_text_difference(e: &str, a: &str) -> String {
    let at = common_prefix_chars(e, a);
    let line = e.chars().take(at).filter(|&c| c == '\n').count() + 1;
    format!("text differs from line {line}")
}

// ------------------------------------------------------------------------------------------------
// docs/DEVIATIONS.md

/// One `| D<n> |` row: its id and its `script-glob:path-glob` items.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Deviation {
    id: String,
    items: Vec<(String, String)>,
}

/// Parses the rows of `docs/DEVIATIONS.md` whose first cell is `D<digits>`. In the second cell,
/// every backquoted span containing a `:` is an item `script-glob:path-glob` (split at the first
/// `:`); other backquoted spans and plain text are prose.
fn parse_deviations(text: &str) -> Vec<Deviation> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix('|') else {
            continue;
        };
        let mut cells = rest.split('|');
        let (Some(id), Some(column)) = (cells.next(), cells.next()) else {
            continue;
        };
        let id = id.trim();
        let is_id =
            id.len() > 1 && id.starts_with('D') && id[1..].chars().all(|c| c.is_ascii_digit());
        if !is_id {
            continue;
        }
        let items = column
            .split('`')
            .skip(1)
            .step_by(2)
            .filter_map(|span| span.split_once(':'))
            .map(|(s, p)| (s.trim().to_owned(), p.trim().to_owned()))
            .filter(|(s, p)| !s.is_empty() && !p.is_empty())
            .collect();
        out.push(Deviation {
            id: id.to_owned(),
            items,
        });
    }
    out
}

/// The id of the first row listing (`script`, `path`), if any.
fn listing_for<'a>(deviations: &'a [Deviation], script: &str, path: &str) -> Option<&'a str> {
    deviations
        .iter()
        .find(|d| {
            d.items
                .iter()
                .any(|(s, p)| glob_match(s, script) && glob_match(p, path))
        })
        .map(|d| d.id.as_str())
}

/// `*` matches any run of characters (including `.`, `[`, `]`), `?` one character; everything
/// else is literal.
fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(&c) if c == '?' || c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

// ------------------------------------------------------------------------------------------------
// Summary

#[derive(Debug, Default)]
struct Summary {
    scripts: usize,
    equal: usize,
    listed: usize,
    unlisted: usize,
    errors: usize,
    missing: usize,
    skipped: usize,
    drift: usize,
}

impl Summary {
    fn add(&mut self, outcome: Outcome, drift: bool) {
        self.scripts += 1;
        match outcome {
            Outcome::Equal => self.equal += 1,
            Outcome::Listed => self.listed += 1,
            Outcome::Unlisted => self.unlisted += 1,
            Outcome::Error => self.errors += 1,
            Outcome::Missing => self.missing += 1,
            Outcome::Skipped => self.skipped += 1,
        }
        self.drift += usize::from(drift);
    }

    fn failed(&self) -> bool {
        self.unlisted + self.errors + self.missing + self.drift > 0
    }

    fn line(&self, live: bool) -> String {
        let mut s = format!(
            "scripts: {}, equal: {}, listed deviations: {}, unlisted differences: {}",
            self.scripts, self.equal, self.listed, self.unlisted
        );
        for (n, what) in [
            (self.errors, "errors"),
            (self.missing, "missing goldens"),
            (self.skipped, "skipped"),
        ] {
            if n > 0 {
                let _ = write!(s, ", {what}: {n}");
            }
        }
        if live {
            let _ = write!(s, ", reference drift: {}", self.drift);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every committed op-script, run through our runner (no node needed), equals its OpenClaw
    /// 2026.6.11 golden byte for byte, except the `x*` scripts, which exist to show a fix: each of
    /// them differs, and only where `docs/DEVIATIONS.md` lists the difference.
    #[test]
    fn corpus_matches_goldens_except_listed_deviations() {
        let root = repo_root();
        let scripts = collect_scripts(&root.join("tests/conformance/scripts")).unwrap();
        assert!(scripts.len() >= 40, "{} scripts", scripts.len());
        let golden_dir = root.join("tests/conformance/expected/openclaw-2026.6.11");
        let deviations =
            parse_deviations(&std::fs::read_to_string(root.join("docs/DEVIATIONS.md")).unwrap());
        let results = parallel_map(&scripts, 2, |script| {
            let name = script_name(script);
            let golden = std::fs::read_to_string(golden_dir.join(format!("{name}.json"))).unwrap();
            let mut text = String::new();
            let outcome = match run_ours(script) {
                Ok(ours) => compare_ours(&name, &golden, &ours, &deviations, &mut text),
                Err(e) => {
                    text = format!("ERROR {name}: {e:#}");
                    Outcome::Error
                }
            };
            (name, outcome, text)
        });
        let mut failures = Vec::new();
        for (name, outcome, text) in &results {
            let expected = if name.starts_with('x') {
                Outcome::Listed
            } else {
                Outcome::Equal
            };
            if *outcome != expected {
                failures.push(format!(
                    "{name}: {outcome:?}, expected {expected:?}\n{text}"
                ));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        let listed = results.iter().filter(|r| r.1 == Outcome::Listed).count();
        assert_eq!(
            listed,
            scripts
                .iter()
                .filter(|s| script_name(s).starts_with('x'))
                .count()
        );
    }

    #[test]
    fn globs() {
        assert!(glob_match("*", ""));
        assert!(glob_match("x0*", "x04-rewrite-serialisation"));
        assert!(glob_match("[*].snapshot.file", "[12].snapshot.file"));
        assert!(glob_match("*.file", "[1].snapshot.file"));
        assert!(!glob_match("*.file", "[1].snapshot.files"));
        assert!(glob_match("[?].snapshot", "[3].snapshot"));
        assert!(!glob_match("[?].snapshot", "[13].snapshot"));
        assert!(glob_match("c44-*:x", "c44-*:x"));
    }

    #[test]
    fn deviation_rows() {
        let md = "| id | scripts / paths | x |\n|---|---|---|\n\
                  | D1 | `*:*.file`, `x04-*:[*].snapshot.entries` and prose `not an item` | a |\n\
                  | D12 | `c44-fork-legacy-source:[0].snapshot` | b |\n| Dx | `a:b` | c |\n";
        let d = parse_deviations(md);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].id, "D1");
        assert_eq!(d[0].items.len(), 2);
        assert_eq!(listing_for(&d, "c07", "[1].snapshot.file"), Some("D1"));
        assert_eq!(
            listing_for(&d, "x04-rewrite", "[0].snapshot.entries"),
            Some("D1")
        );
        assert_eq!(
            listing_for(&d, "c44-fork-legacy-source", "[0].snapshot"),
            Some("D12")
        );
        assert_eq!(
            listing_for(&d, "c44-fork-legacy-source", "[0].snapshot.tree"),
            None
        );
    }

    #[test]
    fn paths_and_order() {
        let e = r#"[{"snapshot":{"a":1,"b":"x\ny","2":[1,2]}}]"#;
        let a = r#"[{"snapshot":{"b":"x\nz","a":1,"2":[1]}}]"#;
        let d = diff_texts(e, a);
        assert_eq!(d[0].path, "[0].snapshot");
        assert!(d[0].expected.contains(r#"["a","b","2"]"#));
        assert_eq!(d[1].path, "[0].snapshot.b");
        assert_eq!(d[1].expected, "line 2: y");
        assert_eq!(d[2].path, "[0].snapshot[\"2\"][1]");
        assert_eq!(d[2].actual, "(absent; 1 element)");
        assert!(diff_texts("[1]", "[1]").is_empty());
        assert_eq!(diff_texts("[1]", "[ 1 ]")[0].path, "(formatting)");
        assert_eq!(diff_texts("[1]", "[1.0]")[0].path, "[0]");
    }
}
