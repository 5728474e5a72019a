// Loads and saves a store with skill prompts through OpenClaw 2026.6.11's own
// loadSessionStore / saveSessionStore and prints the input, the saved sessions.json, the blob
// files and the store as a second load returns it (see ../README.md).
// Usage: node make-skills-expected.mjs <openclaw dist dir> > skills-expected.json
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
const dist = process.argv[2];
const { b: loadSessionStore, h: saveSessionStore } = await import(`${dist}/store-jR_nVe0n.js`);
const long = "Use the skills below.\n" + "x".repeat(490);            // 512 chars: a blob
const unicode = "é🙂 " + "y".repeat(508);                                 // 512 UTF-16 units, 515 bytes
const short = "z".repeat(511);                                            // 511: inline
const input = {
  "agent:main:a": { sessionId: "a1", skillsSnapshot: { prompt: long, skills: [{ name: "web" }], resolvedSkills: [{ name: "web", path: "/x" }], version: 3 }, label: "A" },
  "agent:main:b": { sessionId: "b1", skillsSnapshot: { prompt: short, version: 3 } },
  "agent:main:c": { sessionId: "c1", skillsSnapshot: { promptRef: { version: 1, algorithm: "sha256", hash: "ab".repeat(32), bytes: 10 }, skills: [] }, label: "C" },
  "agent:main:d": { sessionId: "d1", skillsSnapshot: { skills: [] } },
  "agent:main:e": { sessionId: "e1", skillsSnapshot: { version: 4, prompt: unicode } },
};
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "oc-skills-"));
const storePath = path.join(dir, "sessions.json");
const inputText = JSON.stringify(input, null, 2);
fs.writeFileSync(storePath, inputText);
const loaded = loadSessionStore(storePath, { skipCache: true });
await saveSessionStore(storePath, loaded, { skipMaintenance: true });
const saved = fs.readFileSync(storePath, "utf8");
const blobs = {};
const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) { const p = path.join(d, e.name); if (e.isDirectory()) walk(p); else if (p !== storePath) blobs[path.relative(dir, p)] = { text: fs.readFileSync(p, "utf8"), mode: (fs.statSync(p).mode & 0o777).toString(8) }; } };
walk(dir);
const reloaded = loadSessionStore(storePath, { skipCache: true });
fs.rmSync(dir, { recursive: true, force: true });
process.stdout.write(JSON.stringify({ input: inputText, saved, blobs, reloaded: JSON.stringify(reloaded, null, 2) }, null, 2) + "\n");
