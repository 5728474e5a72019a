// Loads a store file with OpenClaw 2026.6.11's loadSessionStore and saves it with
// saveSessionStore (skipMaintenance) in a temp dir; prints the saved text (see ../README.md).
// Usage: node make-load-save-expected.mjs <openclaw dist dir> <input sessions.json> > <name>-saved.json
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
const [dist, input] = process.argv.slice(2);
const { b: loadSessionStore, h: saveSessionStore } = await import(`${dist}/store-jR_nVe0n.js`);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "oc-load-save-"));
const storePath = path.join(dir, "sessions.json");
fs.copyFileSync(input, storePath);
await saveSessionStore(storePath, loadSessionStore(storePath, { skipCache: true }), { skipMaintenance: true });
process.stdout.write(fs.readFileSync(storePath, "utf8"));
fs.rmSync(dir, { recursive: true, force: true });
