// Exports a COPY of a session to HTML with the real pi (0.73.1, the reference installed by
// `xtask/conformance/install.sh pi` under target/conformance-ref/pi): pi's `exportFromFile`
// opens the file with its SessionManager, which migrates a v1/v2 file in place, so the session
// given is copied into a temporary directory first and never opened by pi itself.
//
//   node crates/session-cli/tests/pi_export_totals.mjs SESSION.jsonl OUT.html
//
// Environment: PI_REF_DIR (default: <repo>/target/conformance-ref/pi). PI_CODING_AGENT_DIR is
// pointed at an empty temporary directory so that no user settings or themes are read.
// Used by crates/session-cli/tests/it/usage_matches_pi_export.rs, which renders OUT.html with
// headless Chromium and compares the header totals pi shows with `sessions usage --json`.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error("usage: node pi_export_totals.mjs SESSION.jsonl OUT.html");
  process.exit(2);
}
const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const ref = process.env.PI_REF_DIR ?? join(repo, "target/conformance-ref/pi");
const work = mkdtempSync(join(tmpdir(), "pi-export-"));
process.env.PI_CODING_AGENT_DIR = join(work, "agent");
try {
  const copy = join(work, basename(input));
  copyFileSync(input, copy);
  const mod = await import(
    pathToFileURL(join(ref, "node_modules/@mariozechner/pi-coding-agent/dist/core/export-html/index.js")).href
  );
  const written = await mod.exportFromFile(copy, { outputPath: resolve(output) });
  console.log(written);
} finally {
  rmSync(work, { recursive: true, force: true });
}
