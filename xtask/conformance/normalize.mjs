// Normalisation of a reference result for comparison (shared/conformance/OPS.md, steps 1-6, in
// order), shared by the conformance runner (runner.mjs) and the agent-session capture script
// (crates/agent-session/tests/fixtures/reference/capture.mjs).

/**
 * `value` as normalised JSON text (one-space indent, final newline): the temporary directory
 * `dir` (when given) becomes `<dir>` (1), file-name timestamps `<fts>_` (2), ISO timestamps
 * `<ts>` (3), uuids and 8-hex-digit ids `#1`, `#2`, … in order of first appearance (4), and
 * numbers within a day of `startMs` `<now-ms>` (5, 6).
 */
export function normalize(value, dir, startMs) {
  let text = JSON.stringify(value);
  if (dir) text = text.split(dir).join("<dir>"); // 1
  text = text.replace(/\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z_/g, "<fts>_"); // 2
  text = text.replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g, "<ts>"); // 3
  const ids = new Map(); // 4
  text = text.replace(
    /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b[0-9a-f]{8}\b/g,
    (m) => {
      if (!ids.has(m)) ids.set(m, `#${ids.size + 1}`);
      return ids.get(m);
    },
  );
  const nowMs = (v) => (typeof v === "number" && Math.abs(v - startMs) <= 86_400_000 ? "<now-ms>" : v);
  const walk = (v) => {
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") {
      const out = {};
      for (const [k, x] of Object.entries(v)) out[k] = walk(x);
      return out;
    }
    return nowMs(v);
  };
  return JSON.stringify(walk(JSON.parse(text)), null, 1) + "\n"; // 5, 6
}
