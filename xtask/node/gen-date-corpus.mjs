// Generates crates/session-format/tests/data/date-corpus.jsonl: strings and what V8's
// `Date.parse` gives for them with TZ=UTC (so "local time" forms read as UTC). Deterministic.
// Run with node >= 20: `TZ=UTC node xtask/node/gen-date-corpus.mjs` (the script refuses another TZ).
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

if (new Date(0).getTimezoneOffset() !== 0) {
  console.error("run with TZ=UTC");
  process.exit(1);
}
const out = join(dirname(fileURLToPath(import.meta.url)), "../../crates/session-format/tests/data/date-corpus.jsonl");

let seed = 12345;
const rand = (n) => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed % n;
};
const pick = (a) => a[rand(a.length)];
const pad = (n, w) => String(n).padStart(w, "0");

const set = new Set();
const add = (s) => set.add(s);

// Hand-picked forms.
[
  "", "foo", "1", "12", "31", "32", "49", "50", "99", "100", "2026", "20260101", "2026-1-1", "2026-01", "2026-01-01",
  "2026-13-01", "2026-00-10", "2026-02-30", "2026-02-31", "2026-02-32", "2026-04-31", "2024-02-29", "2025-02-29",
  "2026-01-01T10:00", "2026-01-01T10:00:00", "2026-01-01T10:00:00Z", "2026-01-01T10:00:00.1Z", "2026-01-01T10:00:00.12Z",
  "2026-01-01T10:00:00.123Z", "2026-01-01T10:00:00.1234Z", "2026-01-01T10:00:00.123456789Z", "2026-01-01T10:00:00.Z",
  "2026-01-01T24:00:00Z", "2026-01-01T24:00:01Z", "2026-01-01T24:00Z", "2026-01-01T24:01Z", "2026-01-01T23:59:60Z",
  "2026-01-01T25:00:00Z", "2026-01-01T00:60:00Z", "2026-01-01T00Z", "2026-01-01T00:00Z", "2026-01-01t00:00:00z",
  "2026-01-01T00:00:00+01:00", "2026-01-01T00:00:00-01:30", "2026-01-01T00:00:00+0100", "2026-01-01T00:00:00+01",
  "2026-01-01T00:00:00+24:00", "2026-01-01T00:00:00+23:59", "2026-01-01T00:00:00 +01:00",
  " 2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z ", " 2026-01-01T00:00:00Z ", "\t2026-01-01",
  "2026-01-01 10:00", "2026-01-01 10:00:00", "2026-01-01 10:00:00Z", "2026-01-01 10:00:00 Z", "2026-01-01 10:00:00 GMT",
  "2026-01-01 10:00:00 UTC", "2026-01-01 10:00:00 +0200", "2026-01-01 10:00:00 GMT+2", "2026-01-01 10:00:00 GMT-0830",
  "2026-01-01 10:00:00.5", "2026-01-01 10:00:00.567", "2026/01/02", "01/02/2026", "1/2/26", "1/2/75", "12/31/1999",
  "31/12/1999", "2026/1/2 3:04:05", "1/1/1", "Jan 1 2026", "1 Jan 2026", "Jan 2026", "2026 Jan 1", "January 1, 2026",
  "Janxyz 1 2026", "jan 1 2026", "JAN 1 2026", "Dec 31 1999 23:59:59", "Feb 30 2026", "Thu, 01 Jan 2026 00:00:00 GMT",
  "Thu, 01 Jan 2026 00:00:00 +0000", "Thu Jan 01 2026 00:00:00 GMT+0000 (Coordinated Universal Time)",
  "Tue Jan 01 2026 10:00:00 GMT+0200 (EET)", "Jan 1, 2026 3:04 PM", "Jan 1, 2026 3:04 AM", "Jan 1, 2026 12:00 AM",
  "Jan 1, 2026 12:00 PM", "Jan 1, 2026 13:00 PM", "Jan 1 2026 10:00 EST", "Jan 1 2026 10:00 PDT", "Jan 1 2026 10:00 Z",
  "Jan 1 2026 10:00 z", "Jan 1 2026 10:00:00.123", "Jan 1 2026 10:00:00.", "2026-01-01T10:00:00.000+00:00",
  "+002026-01-01T00:00:00Z", "-000001-01-01T00:00:00Z", "-000000-01-01T00:00:00Z", "+275760-09-13T00:00:00.000Z",
  "+275760-09-13T00:00:00.001Z", "-271821-04-20T00:00:00.000Z", "-271821-04-19T23:59:59.999Z", "0000-01-01T00:00:00Z",
  "1970-01-01T00:00:00.000Z", "1969-12-31T23:59:59.999Z", "2026-01-01T00:00:00.000Z", "2026-06-15T12:34:56.789Z",
  "not a date 2026", "2026 not a date", "(comment) Jan 1 2026", "Jan 1 2026 (comment)", "Mon Jan 1 2026", "Monday, January 1, 2026",
  "2026-01-01T00:00:00.000Zjunk", "2026-01-01junk", "x2026-01-01", "2026.01.01", "2026 01 01", "10:00", "10:00 2026-01-01",
  "Jan 1 10:00 2026", "1 2 3", "1 2 3 4", "2026-01-01T00:00:00,5Z", "NaN", "Infinity", "-1", "+1", "0", "00", "000", "0000",
  "2026-01-01T00:00:00.000Z\n", "١٢", "Jan\u00a01 2026", "2026年1月1日",
].forEach(add);

// Generated ISO-shaped strings, valid and broken.
const months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
for (let i = 0; i < 900; i++) {
  const y = pick([1970, 1999, 2000, 2024, 2026, 2038, 9999, 1, 49, 50, 99, 100]);
  const mo = rand(14);
  const d = rand(34);
  const h = rand(26);
  const mi = rand(62);
  const se = rand(62);
  const ms = rand(1000);
  const kind = rand(10);
  let s;
  if (kind === 0) s = `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}`;
  else if (kind === 1) s = `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(se, 2)}.${pad(ms, 3)}Z`;
  else if (kind === 2) s = `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}${pick(["", "Z", "+05:30", "-08:00", "+0530"])}`;
  else if (kind === 3) s = `${pick(months)} ${d} ${y} ${h}:${pad(mi, 2)}:${pad(se, 2)}${pick(["", " GMT", " UTC", " PM", " am", " EST", " +0100", " GMT-7"])}`;
  else if (kind === 4) s = `${d} ${pick(months)} ${y}`;
  else if (kind === 5) s = `${mo}/${d}/${y}${pick(["", " " + h + ":" + pad(mi, 2)])}`;
  else if (kind === 6) s = `${y}-${mo}-${d}${pick(["", " " + h + ":" + pad(mi, 2), "T" + pad(h, 2) + ":" + pad(mi, 2)])}`;
  else if (kind === 7) s = `${pick(["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"])}, ${pad(d, 2)} ${pick(months)} ${y} ${pad(h, 2)}:${pad(mi, 2)}:${pad(se, 2)} GMT`;
  else if (kind === 8) s = `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)} ${pad(h, 2)}:${pad(mi, 2)}:${pad(se, 2)}.${ms}`;
  else s = `${rand(100)}${pick(["", " ", "/", "-", ":"])}${rand(100)}${pick(["", " ", "/", "-", ":"])}${rand(3000)}`;
  add(s);
}

const lines = [...set].map((s) => {
  const v = Date.parse(s);
  return JSON.stringify({ input: s, ms: Number.isNaN(v) ? null : v });
});
writeFileSync(out, lines.join("\n") + "\n");
console.log(`${lines.length} records -> ${out}`);
