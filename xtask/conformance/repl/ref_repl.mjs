// A line-driven OpenClaw 2026.6.11 SessionManager for interop experiments: one JSON command per
// stdin line, one JSON reply per stdout line. Managers stay open between commands (a long-lived
// reference writer with its own stale view of the file).
//   {"op":"open","name":"r","file":"/path"}            -> {"ok":true,"leaf":...}
//   {"op":"user","name":"r","text":"q"}                -> {"ok":true,"id":...}
//   {"op":"assistant","name":"r","text":"a"}           -> {"ok":true,"id":...}
//   {"op":"label","name":"r","target":"id","label":"x"}
//   {"op":"info","name":"r","sessionName":"x"}
//   {"op":"branch","name":"r","id":"x"}
//   {"op":"context","name":"r"}                         -> {"ok":true,"leaf":..,"context":..}
//   {"op":"fresh","file":"/path"}                       -> context of a fresh open
//   {"op":"fork","file":"/src","dir":"/d","cwd":"/c"}   -> {"ok":true,"file":..}
//
// Run with the node 24 binary of the installed reference; REF_DIR names the installed
// `node_modules/openclaw` package (default: <repo>/target/conformance-ref/openclaw/node_modules/openclaw).
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { loadSessionManager } from "../session-manager.mjs";

const pkgDir = process.env.REF_DIR
  ?? fileURLToPath(new URL("../../../target/conformance-ref/openclaw/node_modules/openclaw", import.meta.url));
const { SessionManager } = await loadSessionManager("openclaw", pkgDir, "openclaw");
const ms = new Map();
let ts = 1767225600000;
const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: ++ts });
const assistant = (text) => ({
  role: "assistant", content: [{ type: "text", text }], api: "anthropic-messages",
  provider: "anthropic", model: "m", stopReason: "stop", timestamp: ++ts,
  usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
});
const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  if (!line.trim()) continue;
  let reply;
  try {
    const c = JSON.parse(line);
    const sm = ms.get(c.name);
    switch (c.op) {
      case "open": { const m = SessionManager.open(c.file); ms.set(c.name, m); reply = { ok: true, leaf: m.getLeafId() ?? null }; break; }
      case "user": reply = { ok: true, id: await sm.appendMessage(user(c.text)) }; break;
      case "assistant": reply = { ok: true, id: await sm.appendMessage(assistant(c.text)) }; break;
      case "label": reply = { ok: true, id: await sm.appendLabelChange(c.target, c.label) }; break;
      case "info": reply = { ok: true, id: await sm.appendSessionInfo(c.sessionName) }; break;
      case "branch": sm.branch(c.id); reply = { ok: true }; break;
      case "context": reply = { ok: true, leaf: sm.getLeafId() ?? null, context: sm.buildSessionContext() }; break;
      case "fresh": { const m = SessionManager.open(c.file); reply = { ok: true, leaf: m.getLeafId() ?? null, context: m.buildSessionContext(), branch: m.getBranch().map((e) => e.id) }; break; }
      case "ctxAt": { const m = SessionManager.open(c.file); if (c.leaf) m.branch(c.leaf); reply = { ok: true, leaf: m.getLeafId() ?? null, context: m.buildSessionContext() }; break; }
      case "fork": { const m = SessionManager.forkFrom(c.file, c.cwd, c.dir); reply = { ok: true, file: m.getSessionFile(), leaf: m.getLeafId() ?? null, context: m.buildSessionContext() }; break; }
      default: reply = { ok: false, error: `unknown op ${c.op}` };
    }
  } catch (e) { reply = { ok: false, error: String(e?.message ?? e) }; }
  process.stdout.write(JSON.stringify(reply) + "\n");
}
