#!/usr/bin/env node
// Generates crates/session-format/tests/data/json-corpus.jsonl: a committed
// conformance corpus for the Rust re-implementation of ECMAScript
// `JSON.parse` + `JSON.stringify` (see /work/shared/spec/pi-format.md §1.7).
//
// Deterministic: all randomness comes from the seeded PRNG below (never
// Math.random), so two runs on the same Node major version produce
// byte-identical output. No npm dependencies.
//
// Usage (from the workspace root):
//   node xtask/node/gen-json-corpus.mjs            # writes the corpus
//   node xtask/node/gen-json-corpus.mjs --check    # regenerates in memory and
//                                                  # fails if the file differs
//
// Record kinds (one JSON object per line, written with JSON.stringify):
//   {"kind":"number","bits":"<16 hex>","expected":"<JSON.stringify(x)>"}
//   {"kind":"string","units":[<u16>...],"expected":"<JSON.stringify(s)>"}
//   {"kind":"text","input":"<JSON text>","expected":"<JSON.stringify(JSON.parse(input))>"}

import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const SCRIPT_DIR = dirname(fileURLToPath(import.meta.url));
const WORKSPACE = join(SCRIPT_DIR, "..", "..");
const OUT_PATH = join(WORKSPACE, "crates", "session-format", "tests", "data", "json-corpus.jsonl");
const SEED = "pi-json-corpus-v1";
const MIN_PER_KIND = 600;
const MIN_TOTAL = 2400;
const MAX_BYTES = 1_500_000;

// ---------------------------------------------------------------------------
// Seeded PRNG: xoshiro128** seeded through splitmix32 from a string hash.
// ---------------------------------------------------------------------------

function makeRng(seedText) {
  let h = 0x811c9dc5;
  for (let i = 0; i < seedText.length; i++) {
    h = Math.imul(h ^ seedText.charCodeAt(i), 0x01000193) >>> 0;
  }
  const splitmix32 = () => {
    h = (h + 0x9e3779b9) >>> 0;
    let z = h;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  const s = [splitmix32(), splitmix32(), splitmix32(), splitmix32()];
  const rotl = (x, k) => ((x << k) | (x >>> (32 - k))) >>> 0;
  const u32 = () => {
    const result = Math.imul(rotl(Math.imul(s[1], 5) >>> 0, 7), 9) >>> 0;
    const t = (s[1] << 9) >>> 0;
    s[2] = (s[2] ^ s[0]) >>> 0;
    s[3] = (s[3] ^ s[1]) >>> 0;
    s[1] = (s[1] ^ s[2]) >>> 0;
    s[0] = (s[0] ^ s[3]) >>> 0;
    s[2] = (s[2] ^ t) >>> 0;
    s[3] = rotl(s[3], 11);
    return result;
  };
  const rng = {
    u32,
    // Uniform float in [0, 1) with 32 bits of randomness (enough here).
    float: () => u32() / 4294967296,
    // Integer in [lo, hi], inclusive.
    int: (lo, hi) => lo + Math.floor((u32() / 4294967296) * (hi - lo + 1)),
    chance: (p) => u32() / 4294967296 < p,
    pick: (arr) => arr[Math.floor((u32() / 4294967296) * arr.length)],
    weighted: (entries) => {
      // entries: [[weight, value], ...]
      let total = 0;
      for (const [w] of entries) total += w;
      let r = (u32() / 4294967296) * total;
      for (const [w, v] of entries) {
        if (r < w) return v;
        r -= w;
      }
      return entries[entries.length - 1][1];
    },
    shuffle: (arr) => {
      const a = arr.slice();
      for (let i = a.length - 1; i > 0; i--) {
        const j = Math.floor((u32() / 4294967296) * (i + 1));
        [a[i], a[j]] = [a[j], a[i]];
      }
      return a;
    },
    digits: (n, firstNonZero = false) => {
      let out = "";
      for (let i = 0; i < n; i++) {
        out += String(i === 0 && firstNonZero ? 1 + Math.floor((u32() / 4294967296) * 9) : Math.floor((u32() / 4294967296) * 10));
      }
      return out;
    },
  };
  return rng;
}

const rng = makeRng(SEED);

// ---------------------------------------------------------------------------
// Double <-> bits helpers.
// ---------------------------------------------------------------------------

const dv = new DataView(new ArrayBuffer(8));
const bitsOf = (x) => {
  dv.setFloat64(0, x);
  return dv.getBigUint64(0);
};
const fromBits = (b) => {
  dv.setBigUint64(0, BigInt.asUintN(64, b));
  return dv.getFloat64(0);
};
const hex16 = (b) => BigInt.asUintN(64, b).toString(16).padStart(16, "0");
const SIGN = 1n << 63n;
// Next double towards +Infinity / -Infinity (finite x only; no NaN handling needed).
function nextUp(x) {
  if (Number.isNaN(x) || x === Infinity) return x;
  if (x === 0) return Number.MIN_VALUE;
  const b = bitsOf(x);
  return fromBits(x > 0 ? b + 1n : b - 1n);
}
function nextDown(x) {
  return -nextUp(-x);
}
function neighbours(x, k) {
  const out = [x];
  let up = x;
  let down = x;
  for (let i = 0; i < k; i++) {
    up = nextUp(up);
    down = nextDown(down);
    out.push(up, down);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Record collection with de-duplication.
// ---------------------------------------------------------------------------

const numberRecords = [];
const stringRecords = [];
const textRecords = [];
const seenBits = new Set();
const seenUnits = new Set();
const seenInputs = new Set();

function addNumberBits(bits) {
  const b = BigInt.asUintN(64, bits);
  const key = hex16(b);
  if (seenBits.has(key)) return;
  seenBits.add(key);
  const x = fromBits(b);
  numberRecords.push({ kind: "number", bits: key, expected: JSON.stringify(x) });
}
function addNumber(x) {
  if (typeof x !== "number") throw new Error(`not a number: ${x}`);
  addNumberBits(bitsOf(x));
}
function addNumberPm(x) {
  addNumber(x);
  addNumber(-x);
}

function unitsOf(s) {
  const u = new Array(s.length);
  for (let i = 0; i < s.length; i++) u[i] = s.charCodeAt(i);
  return u;
}
function strOfUnits(units) {
  let s = "";
  for (let i = 0; i < units.length; i += 4096) {
    s += String.fromCharCode(...units.slice(i, i + 4096));
  }
  return s;
}
function addStringUnits(units) {
  for (const u of units) {
    if (!Number.isInteger(u) || u < 0 || u > 0xffff) throw new Error(`bad code unit ${u}`);
  }
  const key = units.join(",");
  if (seenUnits.has(key)) return;
  seenUnits.add(key);
  stringRecords.push({ kind: "string", units: units.slice(), expected: JSON.stringify(strOfUnits(units)) });
}
const addString = (s) => addStringUnits(unitsOf(s));

function addText(input) {
  if (typeof input !== "string") throw new Error("text input must be a string");
  if (!isWellFormed(input)) {
    throw new Error(`text input contains raw lone surrogates: ${JSON.stringify(input).slice(0, 200)}`);
  }
  if (seenInputs.has(input)) return;
  let parsed;
  try {
    parsed = JSON.parse(input);
  } catch (e) {
    throw new Error(`generated input is not valid JSON (${e.message}): ${JSON.stringify(input).slice(0, 300)}`);
  }
  seenInputs.add(input);
  textRecords.push({ kind: "text", input, expected: JSON.stringify(parsed) });
}

function isWellFormed(s) {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        i++;
        continue;
      }
      return false;
    }
    if (c >= 0xdc00 && c <= 0xdfff) return false;
  }
  return true;
}

// ===========================================================================
// 1. NUMBERS
// ===========================================================================

function genNumbers() {
  // Zeros, ones, small integers and simple fractions.
  addNumber(0);
  addNumber(-0);
  for (const x of [1, 2, 3, 5, 7, 9, 10, 11, 42, 99, 100, 255, 256, 1000, 65535, 65536, 1e6, 0.5, 0.25, 0.125, 1.5, 2.5, 0.1, 0.2, 0.3, 0.7, 1 / 3, 2 / 3, Math.PI, Math.E, Math.SQRT2, Math.LN2]) {
    addNumberPm(x);
  }
  addNumber(0.1 + 0.2);
  addNumber(0.1 + 0.7);
  addNumber(1.1 * 1.1);
  addNumber(0.1 * 3);
  addNumber(1 - 0.9);
  addNumber(4.35 * 100);
  addNumber(1.005 * 1000);
  addNumber(2.1000000000000002e-5);
  addNumber(0.000021000000000000002);
  addNumber(0.000009);
  addNumber(9e-6);
  addNumber(3e-6);

  // Integers around 2^24, 2^30, 2^31, 2^32, 2^53, 2^63, 2^64.
  for (const e of [24, 30, 31, 32, 53, 54, 63, 64]) {
    const p = 2 ** e;
    for (const d of [-2, -1, 0, 1, 2]) addNumberPm(p + d);
    for (const x of neighbours(p, 2)) addNumberPm(x);
  }
  addNumberPm(Number.MAX_SAFE_INTEGER);
  addNumberPm(Number.MAX_SAFE_INTEGER - 1);
  addNumberPm(Number.MAX_SAFE_INTEGER + 2);
  addNumberPm(Number.EPSILON);
  addNumberPm(1 + Number.EPSILON);
  addNumberPm(1 - Number.EPSILON / 2);

  // 1e20..1e22 and neighbours (fixed/exponent switch at 1e21).
  for (const x of [1e20, 1e21, 1e22]) {
    for (const y of neighbours(x, 4)) addNumberPm(y);
  }
  for (const x of [9.999999999999999e20, 999999999999999900000, 123456789012345680000, 1.2345678901234568e21, 5e20, 2e21, 1.5e21, 9.9e20, 1e21 - 65536, 1e21 + 131072]) {
    addNumberPm(x);
    for (const y of neighbours(x, 1)) addNumber(y);
  }

  // 1e-6, 1e-7 and neighbours (fixed/exponent switch below 1e-6).
  for (const x of [1e-5, 1e-6, 1e-7, 1e-8]) {
    for (const y of neighbours(x, 3)) addNumberPm(y);
  }
  for (const x of [1.5e-7, 9.99e-7, 9.999999999999999e-7, 1.0000000000000001e-6, 9.9e-8, 1.23e-7, 5e-7, 2e-7, 1.0000000000000002e-7, 0.000001234, 0.0000001234]) {
    addNumberPm(x);
  }

  // Extremes: MAX_VALUE, MIN_VALUE, smallest normal, subnormals, non-finite.
  for (const x of neighbours(Number.MAX_VALUE, 3)) addNumberPm(x);
  const SMALLEST_NORMAL = 2.2250738585072014e-308;
  for (const x of neighbours(SMALLEST_NORMAL, 3)) addNumberPm(x);
  for (const b of [1n, 2n, 3n, 4n, 5n, 10n, 0xffn, 0x100n, 0x7ffffn, 0x8000000000000n, 0xfffffffffffffn, 0xffffffffffffen, 0x123456789abcdn, 0x0000000001000n]) {
    addNumberBits(b);
    addNumberBits(b | SIGN);
  }
  for (let i = 0; i < 20; i++) {
    const mant = (BigInt(rng.u32()) << 20n) | BigInt(rng.u32() & 0xfffff);
    addNumberBits(mant);
    addNumberBits(mant | SIGN);
  }
  // NaN (several payloads; all stringify to "null") and infinities.
  for (const b of [0x7ff8000000000000n, 0xfff8000000000000n, 0x7ff0000000000001n, 0x7fffffffffffffffn, 0xffffffffffffffffn, 0x7ff4000000000000n]) {
    addNumberBits(b);
  }
  addNumber(Infinity);
  addNumber(-Infinity);

  // Multiples of 3e-6 (cost per token style) for k = 1..50.
  for (let k = 1; k <= 50; k++) addNumber(3e-6 * k);
  for (let k = 1; k <= 20; k++) addNumber(k * 3e-6);
  for (let k = 1; k <= 20; k++) addNumber((k * 3) / 1e6);

  // Cost-like products and sums ($ per million tokens x token counts).
  const prices = [0.075, 0.1, 0.15, 0.25, 0.3, 0.5, 0.6, 1.1, 1.25, 2.5, 3, 3.75, 4.4, 5, 10, 12, 15, 18.75, 30, 60, 75];
  for (let i = 0; i < 80; i++) {
    const tokens = rng.weighted([
      [3, rng.int(0, 20)],
      [4, rng.int(1, 2000)],
      [3, rng.int(1000, 200000)],
    ]);
    const price = rng.pick(prices);
    const style = rng.int(0, 2);
    if (style === 0) addNumber((price / 1000000) * tokens);
    else if (style === 1) addNumber((price * tokens) / 1000000);
    else addNumber(tokens * (price / 1e6));
  }
  for (let i = 0; i < 40; i++) {
    const parts = [];
    for (let j = 0; j < 4; j++) parts.push((rng.pick(prices) / 1000000) * rng.int(0, 50000));
    addNumber(parts[0] + parts[1] + parts[2] + parts[3]);
  }
  for (let i = 0; i < 20; i++) {
    let acc = 0;
    const n = rng.int(2, 30);
    for (let j = 0; j < n; j++) acc += (rng.pick(prices) / 1e6) * rng.int(1, 3000);
    addNumber(acc);
  }

  // Powers of ten 1e-30..1e30 (literal and computed), plus 2e/5e/9e variants.
  for (let k = -30; k <= 30; k++) {
    addNumber(Number(`1e${k}`));
    addNumber(-Number(`1e${k}`));
    addNumber(10 ** k);
    addNumber(Number(`2e${k}`));
    addNumber(Number(`5e${k}`));
    addNumber(Number(`9.5e${k}`));
  }
  for (const k of [-324, -323, -320, -310, -308, -307, -300, -200, -100, -50, 50, 100, 200, 300, 307, 308]) {
    addNumber(Number(`1e${k}`));
  }

  // Well-known shortest-representation stress values.
  for (const t of ["5e-324", "1.7976931348623157e308", "2.2250738585072011e-308", "4.9406564584124654e-324", "9007199254740993", "1.00000000000000011102230246251565404236316680908203125", "0.1e-309", "123456789012345678901234567890", "1.23e+45", "7.2057594037927933e16", "4.35", "2.675", "1.4142135623730951", "299792458", "6.02214076e23", "1.602176634e-19", "5.551115123125783e-17", "18014398509481984", "36028797018963964", "3.0000000000000004", "0.30000000000000004", "9.109e-31", "1.7e308", "8.41e21", "8.41e-22"]) {
    addNumberPm(Number(t));
  }

  // Random decimal strings with 1..17 significant digits at random exponents.
  for (let i = 0; i < 260; i++) {
    const nd = rng.int(1, 17);
    const d = rng.digits(nd, true);
    const exp = rng.weighted([
      [6, rng.int(-12, 25)],
      [3, rng.int(-40, 40)],
      [1, rng.int(-324, 308)],
    ]);
    const t = `${rng.chance(0.3) ? "-" : ""}${d[0]}.${d.slice(1) || "0"}e${exp}`;
    const x = Number(t);
    addNumber(x);
  }
  // Random integers of assorted magnitudes.
  for (let i = 0; i < 60; i++) {
    addNumber((rng.chance(0.3) ? -1 : 1) * Number(rng.digits(rng.int(1, 25), true)));
  }
  // Random finite doubles from random bit patterns.
  let made = 0;
  while (made < 200) {
    const b = (BigInt(rng.u32()) << 32n) | BigInt(rng.u32());
    const x = fromBits(b);
    if (!Number.isFinite(x)) continue;
    addNumberBits(b);
    made++;
  }
  // Random bit patterns concentrated in the exponent window where notation switches.
  for (let i = 0; i < 80; i++) {
    // biased exponents for roughly 1e-9..1e23
    const e = BigInt(rng.int(1023 - 30, 1023 + 76));
    const mant = (BigInt(rng.u32() & 0xfffff) << 32n) | BigInt(rng.u32());
    addNumberBits((rng.chance(0.25) ? SIGN : 0n) | (e << 52n) | mant);
  }
}

// ===========================================================================
// 2. STRINGS
// ===========================================================================

const SPECIAL_BMP = [0x0085, 0x00a0, 0x00ad, 0x0100, 0x07ff, 0x0800, 0x2028, 0x2029, 0x200b, 0x200d, 0x202e, 0x2060, 0x3000, 0xe000, 0xf8ff, 0xfeff, 0xfffd, 0xfffe, 0xffff];

function randomUnit() {
  // Returns an array of one or two code units.
  return rng.weighted([
    [30, () => [rng.int(0x20, 0x7e)]],
    [5, () => [rng.pick([0x22, 0x5c, 0x2f])]],
    [6, () => [rng.weighted([[8, rng.int(0x00, 0x1f)], [1, 0x7f]])]],
    [5, () => [rng.int(0x80, 0xff)]],
    [5, () => [rng.weighted([[3, rng.int(0x100, 0xd7ff)], [1, rng.int(0xe000, 0xffff)]])]],
    [3, () => [rng.pick(SPECIAL_BMP)]],
    [4, () => {
      const cp = rng.weighted([[3, rng.int(0x1f300, 0x1faff)], [1, rng.int(0x10000, 0x10ffff)]]);
      const v = cp - 0x10000;
      return [0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff)];
    }],
    [2, () => [rng.int(0xd800, 0xdbff)]],
    [2, () => [rng.int(0xdc00, 0xdfff)]],
  ])();
}
function randomUnits(n) {
  const out = [];
  while (out.length < n) out.push(...randomUnit());
  return out.slice(0, n);
}

function genStrings() {
  addStringUnits([]);
  // Every code unit 0x00..0x7F alone and embedded (DEL 0x7F included).
  for (let c = 0; c <= 0x7f; c++) addStringUnits([c]);
  for (let c = 0; c <= 0x7f; c++) addStringUnits([0x61, c, 0x62]);
  // All of U+0080..U+00FF alone, and a sample embedded.
  for (let c = 0x80; c <= 0xff; c++) addStringUnits([c]);
  for (let c = 0x80; c <= 0xff; c += 5) addStringUnits([0x78, c, 0x79]);
  // Assorted BMP specials (line/paragraph separators, BOM, replacement char, ...).
  for (const c of SPECIAL_BMP) {
    addStringUnits([c]);
    addStringUnits([0x41, c, 0x42]);
    addStringUnits([c, c]);
  }
  // All control characters next to each other, and with their neighbours.
  addStringUnits(Array.from({ length: 32 }, (_, i) => i));
  addStringUnits(Array.from({ length: 128 }, (_, i) => i));
  addStringUnits(Array.from({ length: 128 }, (_, i) => 0x80 + i));

  // Lone surrogates at boundaries, at start/middle/end.
  const loneBoundary = [0xd800, 0xd801, 0xdbfe, 0xdbff, 0xdc00, 0xdc01, 0xdffe, 0xdfff, 0xd83d, 0xde00];
  for (const s of loneBoundary) {
    addStringUnits([s]);
    addStringUnits([s, 0x61]);
    addStringUnits([0x61, s]);
    addStringUnits([0x61, s, 0x62]);
    addStringUnits([s, s]);
    addStringUnits([0x22, s, 0x5c]);
  }
  // Neighbours of the surrogate range (not surrogates).
  for (const c of [0xd7ff, 0xe000]) {
    addStringUnits([c]);
    addStringUnits([c, 0xd800]);
    addStringUnits([0xdfff, c]);
  }
  // Valid pairs: U+10000, U+1F600, U+10FFFF, and others.
  const pairs = [[0xd800, 0xdc00], [0xd83d, 0xde00], [0xdbff, 0xdfff], [0xd834, 0xdd1e], [0xd83c, 0xdf89], [0xd801, 0xdc37], [0xd800, 0xdfff], [0xdbff, 0xdc00]];
  for (const [h, l] of pairs) {
    addStringUnits([h, l]);
    addStringUnits([0x61, h, l, 0x62]);
    addStringUnits([h, l, h, l]);
    // reversed pairs (low then high): two lone surrogates
    addStringUnits([l, h]);
    addStringUnits([0x61, l, h, 0x62]);
    // high, high, low: lone high then a pair
    addStringUnits([h, h, l]);
    // high, low, low: a pair then a lone low
    addStringUnits([h, l, l]);
    // pair then lone high at end / lone low at start then pair
    addStringUnits([h, l, h]);
    addStringUnits([l, h, l]);
    // surrogate separated by ASCII
    addStringUnits([h, 0x20, l]);
  }
  // Random lone surrogates in assorted positions.
  for (let i = 0; i < 40; i++) {
    const s = rng.chance(0.5) ? rng.int(0xd800, 0xdbff) : rng.int(0xdc00, 0xdfff);
    const pre = randomUnits(rng.int(0, 4)).filter((u) => u < 0xd800 || u > 0xdfff);
    const post = randomUnits(rng.int(0, 4)).filter((u) => u < 0xd800 || u > 0xdfff);
    // Avoid accidentally forming a pair with a neighbour (filtered above).
    addStringUnits([...pre, s, ...post]);
  }
  // Random valid astral characters.
  for (let i = 0; i < 20; i++) {
    const v = rng.int(0x10000, 0x10ffff) - 0x10000;
    addStringUnits([0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff)]);
  }

  // Quotes, backslashes, slashes.
  for (const s of ['"', "\\", "/", '""', "\\\\", "//", '\\"', '"\\', "\\/", "</script>", "C:\\Users\\pi\\file.txt", 'say "hi"', "a/b/c", "http://example.com/x?y=1&z=2", "\\u0041", "\\n", '{"a":1}', "'single'", "`tick`", "\\\\server\\share", "\b\f\n\r\t", "\r\n", "\n\n\n", "\t\t", "\u0000\u0000", "tab\there", "line1\nline2"]) {
    addString(s);
  }
  // Plain text and Unicode samples.
  for (const s of ["hello", "Hello, World!", " ", "   leading", "trailing   ", "naïve café", "Ünïcödé", "日本語テキスト", "한국어", "Ελληνικά", "русский", "עברית", "العربية", "🙂👍🏽👨‍👩‍👧", "✓ ✅ → ─│┌┐", "emoji at end 😀", "😀 emoji at start", "a\u2028b\u2029c", "\ufeffBOM", "\u{10ffff}", "\u{1f600}", "ﬃ", "e\u0301", "\u00e9", "Zalgo z̷̢̛a̶l̵g̸o̴"]) {
    addString(s);
  }

  // Long strings (1 KiB .. 4 KiB code units).
  for (const n of [1024, 1500, 2048, 2500, 3000, 3500, 4000, 4096]) {
    addStringUnits(randomUnits(n));
  }
  addStringUnits(Array.from({ length: 2048 }, (_, i) => 0x20 + (i % 95)));
  addStringUnits(Array.from({ length: 1100 }, (_, i) => i % 32));
  addStringUnits(Array.from({ length: 1024 }, (_, i) => (i % 2 === 0 ? 0xd83d : 0xde00)));
  addStringUnits(Array.from({ length: 1024 }, (_, i) => 0xd800 + (i % 1024) * 2));

  // Random mixes.
  for (let i = 0; i < 220; i++) {
    addStringUnits(randomUnits(rng.weighted([[5, rng.int(1, 8)], [4, rng.int(9, 40)], [1, rng.int(41, 200)]])));
  }
}

// ===========================================================================
// 3. TEXTS (JSON.parse then JSON.stringify)
// ===========================================================================

// --- String literal writers -------------------------------------------------

const hex4 = (u, hexCase) => {
  const h = u.toString(16).padStart(4, "0");
  if (hexCase === "upper") return h.toUpperCase();
  if (hexCase === "lower") return h;
  // "mixed": randomise each hex digit's case
  let out = "";
  for (const ch of h) out += rng.chance(0.5) ? ch.toUpperCase() : ch;
  return out;
};
const SHORT = { 0x08: "\\b", 0x09: "\\t", 0x0a: "\\n", 0x0c: "\\f", 0x0d: "\\r", 0x22: '\\"', 0x5c: "\\\\" };

// Encode a JS string (which may contain lone surrogates) as a JSON string
// literal. mode: "canonical" | "allU" | "mixed". Raw lone surrogates are never
// emitted: they are always written as \uXXXX escapes.
function strLit(s, mode = "canonical", hexCase = "lower") {
  if (mode === "canonical") return JSON.stringify(s);
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const d = i + 1 < s.length ? s.charCodeAt(i + 1) : -1;
    const hc = hexCase === "random" ? rng.pick(["lower", "upper", "mixed"]) : hexCase;
    if (mode === "allU") {
      out += `\\u${hex4(c, hc)}`;
      continue;
    }
    // mixed
    if (c >= 0xd800 && c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
      if (rng.chance(0.5)) out += s[i] + s[i + 1];
      else out += `\\u${hex4(c, hc)}\\u${hex4(d, hc)}`;
      i++;
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      out += `\\u${hex4(c, hc)}`;
      continue;
    }
    if (c < 0x20 || c === 0x22 || c === 0x5c) {
      out += SHORT[c] !== undefined && rng.chance(0.6) ? SHORT[c] : `\\u${hex4(c, hc)}`;
      continue;
    }
    if (c === 0x2f) {
      out += rng.pick(["/", "\\/", `\\u${hex4(c, hc)}`]);
      continue;
    }
    out += rng.chance(0.7) ? s[i] : `\\u${hex4(c, hc)}`;
  }
  return out + '"';
}

// --- Number literal writers ---------------------------------------------------

// Decompose a finite nonzero |x| into shortest digits D and exponent q, so
// that |x| == D * 10^q (D has no leading zeros).
function decompose(x) {
  const [m, e] = Math.abs(x).toExponential().split("e");
  const D = m.replace(".", "");
  return { D, q: Number(e) - (D.length - 1) };
}
const expMark = () => rng.pick(["e", "E", "e+", "E+", "e", "e"]);
function expText(n) {
  if (n < 0) return `${rng.pick(["e", "E"])}-${"0".repeat(rng.weighted([[4, 0], [1, 1], [1, 2]]))}${-n}`;
  return `${expMark()}${"0".repeat(rng.weighted([[4, 0], [1, 1], [1, 2]]))}${n}`;
}
// An alternative (valid JSON) spelling of the number x; parses back to x as
// long as x is finite.
function altNumber(x) {
  if (!Number.isFinite(x)) throw new Error("altNumber needs a finite number");
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  if (x === 0) return sign + rng.pick(["0", "0.0", "0e0", "0E+5", "0.000e-10", "0.0E0", "0e-0"]);
  const { D, q } = decompose(x);
  const style = rng.int(0, 5);
  const pad = rng.int(0, 3);
  switch (style) {
    case 0: // integer digits with exponent: 21e-6
      return `${sign}${D}${expText(q)}`;
    case 1: // trailing zeros moved into the exponent: 2100e-8
      return `${sign}${D}${"0".repeat(pad)}${expText(q - pad)}`;
    case 2: { // 0.00021e-1
      return `${sign}0.${"0".repeat(pad)}${D}${expText(q + D.length + pad)}`;
    }
    case 3: { // d.ddd000E±n
      const n = q + D.length - 1;
      return `${sign}${D[0]}.${D.slice(1)}${"0".repeat(pad + (D.length === 1 ? 1 : 0))}${expText(n)}`;
    }
    default: { // plain fixed notation when reasonable, else JS spelling
      const intLen = D.length + q;
      if (q >= 0 && intLen <= 40) return `${sign}${D}${"0".repeat(q)}${rng.chance(0.4) ? "." + "0".repeat(pad + 1) : ""}`;
      if (q < 0 && intLen > 0) return `${sign}${D.slice(0, intLen)}.${D.slice(intLen)}${"0".repeat(pad)}`;
      if (q < 0 && intLen > -40) return `${sign}0.${"0".repeat(-intLen)}${D}${"0".repeat(pad)}`;
      return `${sign}${D}e${q}`;
    }
  }
}
// A random JSON number literal straight from the grammar.
function randomNumberText() {
  let t = rng.chance(0.3) ? "-" : "";
  t += rng.chance(0.2) ? "0" : rng.digits(rng.weighted([[6, rng.int(1, 5)], [3, rng.int(6, 20)], [1, rng.int(21, 60)]]), true);
  if (rng.chance(0.5)) t += "." + rng.digits(rng.weighted([[6, rng.int(1, 6)], [3, rng.int(7, 20)], [1, rng.int(21, 60)]]));
  if (rng.chance(0.45)) {
    t += rng.pick(["e", "E"]) + rng.pick(["", "+", "-"]);
    t += rng.weighted([[6, String(rng.int(0, 30))], [3, String(rng.int(0, 330))], [1, "0".repeat(rng.int(1, 3)) + String(rng.int(0, 400))]]);
  }
  return t;
}
const FIXED_NUMBER_TEXTS = [
  "0", "-0", "-0.0", "0.0", "0e0", "-0e0", "0E-5", "1", "-1", "1.0", "1.00000", "10", "1E21", "1e21", "1e+21", "1e+021", "1E+0021",
  "0.1e1", "0.01e2", "100e-2", "1000e-3", "1e0", "1E0", "1e-0", "1e+0", "1e-7", "1e-07", "1E-007", "0.0000001", "0.000001", "1e-6",
  "0.00000099", "1e20", "100000000000000000000", "1000000000000000000000", "999999999999999999999", "9.999999999999999e20",
  "123456789012345678901234567890", "123456789012345680000", "1234567890123456789", "-123456789012345678901234567890",
  "0.1", "0.10000000000000000555111512312578270211815834045410156250", "0.30000000000000004", "0.3000000000000000444089209850062616169452667236328125",
  "3.141592653589793238462643383279502884197169399375105820974944", "2.718281828459045235360287471352662497757",
  "9007199254740993", "9007199254740992", "9007199254740991", "9007199254740994", "9007199254740995", "18014398509481985",
  "9007199254740993.0000000000000000001", "1.00000000000000011102230246251565404236316680908203125",
  "1.00000000000000011102230246251565404236316680908203125001", "1.0000000000000001110223024625156540423631668090820312499999",
  "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308", "1.8e308", "-1.8e308", "1e309", "1e400", "-1e400",
  "2.2250738585072014e-308", "2.2250738585072011e-308", "2.2250738585072012e-308", "4.9406564584124654e-324", "5e-324", "3e-324",
  "2.4703282292062327e-324", "2.4703282292062328e-324", "1e-324", "1e-400", "-1e-400", "0.0000000000000000000000000000001",
  "2.1000000000000002e-05", "2.1000000000000002E-5", "0.000021000000000000002", "21000000000000002e-21", "9e-6", "9E-06", "0.000009",
  "3e-06", "3.0e-6", "0.0000030", "1.5e-5", "4.530000000000001e-3", "0.0045", "1e-30", "1e30", "1E+30", "4294967295", "4294967296",
  "2147483647", "2147483648", "-2147483648", "-2147483649", "1e1000000", "1e-1000000", "0e1000000",
  "0." + "0".repeat(300) + "1", "1" + "0".repeat(308), "1" + "0".repeat(309), "0." + "9".repeat(400), "1." + "0".repeat(200) + "1",
  "7" + "3".repeat(100), "-0." + "0".repeat(10) + "123456789".repeat(10),
];

// --- Value AST and renderer -------------------------------------------------

// Node shapes: {t:"raw",text} | {t:"arr",items:[node]} | {t:"obj",members:[[keyLiteralText,node]]}
const raw = (text) => ({ t: "raw", text });
const arr = (items) => ({ t: "arr", items });
const obj = (members) => ({ t: "obj", members });

const WS_STYLES = ["none", "none", "none", "space", "pretty", "prettyTabsCrlf", "random", "random"];

function makeGap(style) {
  const rand = () => {
    const n = rng.weighted([[5, 0], [3, 1], [2, 2], [1, 4]]);
    let s = "";
    for (let i = 0; i < n; i++) s += rng.pick([" ", "\t", "\r", "\n", "  ", "\r\n"]);
    return s;
  };
  return (kind, depth) => {
    switch (style) {
      case "none":
        return "";
      case "space":
        return kind === "afterComma" || kind === "afterColon" ? " " : "";
      case "pretty":
        if (kind === "afterColon") return " ";
        if (kind === "afterOpen" || kind === "afterComma") return "\n" + "  ".repeat(depth);
        if (kind === "beforeClose") return "\n" + "  ".repeat(depth - 1);
        if (kind === "trail") return "\n";
        return "";
      case "prettyTabsCrlf":
        if (kind === "afterColon") return "\t";
        if (kind === "afterOpen" || kind === "afterComma") return "\r\n" + "\t".repeat(depth);
        if (kind === "beforeClose") return "\r\n" + "\t".repeat(depth - 1);
        if (kind === "lead") return "\t";
        if (kind === "trail") return "\r\n";
        return "";
      case "random":
        return rand();
      default:
        throw new Error(`unknown ws style ${style}`);
    }
  };
}

function render(node, gap, depth = 0) {
  switch (node.t) {
    case "raw":
      return node.text;
    case "arr": {
      if (node.items.length === 0) return "[" + gap("empty", depth + 1) + "]";
      let out = "[";
      node.items.forEach((it, i) => {
        out += i === 0 ? gap("afterOpen", depth + 1) : "," + gap("afterComma", depth + 1);
        out += render(it, gap, depth + 1) + gap("afterValue", depth + 1);
      });
      return out + gap("beforeClose", depth + 1) + "]";
    }
    case "obj": {
      if (node.members.length === 0) return "{" + gap("empty", depth + 1) + "}";
      let out = "{";
      node.members.forEach(([k, v], i) => {
        out += i === 0 ? gap("afterOpen", depth + 1) : "," + gap("afterComma", depth + 1);
        out += k + gap("beforeColon", depth + 1) + ":" + gap("afterColon", depth + 1);
        out += render(v, gap, depth + 1) + gap("afterValue", depth + 1);
      });
      return out + gap("beforeClose", depth + 1) + "}";
    }
    default:
      throw new Error("bad node");
  }
}
function textOf(node, style = rng.pick(WS_STYLES)) {
  const gap = makeGap(style);
  return gap("lead", 0) + render(node, gap, 0) + gap("trail", 0);
}

// --- Random value generation --------------------------------------------------

const INTEGERISH_KEYS = ["0", "1", "2", "3", "9", "10", "11", "99", "100", "4294967294", "4294967295", "4294967296", "2147483647", "2147483648", "9007199254740993", "01", "00", "-0", "-1", "1.5", "1.0", " 1", "1 ", "+1", "1e3", "0x10", "", "__proto__", "constructor", "toString", "length", "Infinity", "NaN", "a", "b", "z", "A", "id", "type", "é", "😀", "\u2028"];

function randomString() {
  const n = rng.weighted([[4, rng.int(0, 6)], [4, rng.int(7, 24)], [1, rng.int(25, 80)]]);
  if (rng.chance(0.35)) {
    // mostly-ASCII words
    let s = "";
    while (s.length < n) s += rng.pick(["alpha", "beta", " ", "x", "Y", "_", "-", "42", ".", "/", "path", "tool", "😀", "é"]);
    return s;
  }
  return strOfUnits(randomUnits(n));
}
function strMode() {
  return rng.weighted([[5, "canonical"], [4, "mixed"], [1, "allU"]]);
}
function hexCaseChoice() {
  return rng.weighted([[4, "lower"], [3, "upper"], [1, "mixed"], [2, "random"]]);
}
function randomStringNode(s = randomString()) {
  return raw(strLit(s, strMode(), hexCaseChoice()));
}
function randomKeyLit() {
  const s = rng.chance(0.4) ? rng.pick(INTEGERISH_KEYS) : rng.chance(0.5) ? String(rng.int(0, 30)) : randomString().slice(0, 12);
  return strLit(s, strMode(), hexCaseChoice());
}
function randomNumberNode() {
  return rng.weighted([
    [3, () => raw(randomNumberText())],
    [3, () => raw(altNumber(rng.pick([0, 1, -1, 0.5, 1e21, 1e-7, 2.1000000000000002e-5, 3e-6, 123.456, 1e300, 5e-324, rng.int(0, 1e9), rng.float() * 10 ** rng.int(-10, 25)])))],
    [2, () => raw(rng.pick(FIXED_NUMBER_TEXTS))],
    [1, () => raw(String(rng.int(-1000, 1000)))],
  ])();
}
function randomValue(depth, maxDepth) {
  const leaf = depth >= maxDepth;
  return rng.weighted([
    [2, () => raw(rng.pick(["true", "false", "null"]))],
    [4, () => randomNumberNode()],
    [4, () => randomStringNode()],
    [leaf ? 0 : 2, () => arr(Array.from({ length: rng.weighted([[1, 0], [5, rng.int(1, 5)]]) }, () => randomValue(depth + 1, maxDepth)))],
    [leaf ? 0 : 3, () => randomObject(depth + 1, maxDepth)],
  ])();
}
function randomObject(depth, maxDepth) {
  const n = rng.weighted([[1, 0], [6, rng.int(1, 6)], [1, rng.int(7, 14)]]);
  const members = [];
  for (let i = 0; i < n; i++) {
    // occasionally repeat an earlier key (possibly with a different spelling)
    if (members.length > 0 && rng.chance(0.12)) {
      const [k] = rng.pick(members);
      members.push([strLit(JSON.parse(k), strMode(), hexCaseChoice()), randomValue(depth, maxDepth)]);
    } else {
      members.push([randomKeyLit(), randomValue(depth, maxDepth)]);
    }
  }
  return obj(members);
}

function genTexts() {
  // --- Literals, empties, top-level scalars -----------------------------------
  for (const t of ["true", "false", "null", " true", "false ", "\ttrue\n", "\r\nnull\r\n", " \n\t\r null \n\t\r ", "{}", "[]", "{ }", "[ ]", "{\n}", "[\r\n\t]", " {} ", "\n[]\n",
    "[{}]", "[[]]", "{\"a\":{}}", "{\"a\":[]}", "[[],{}]", "[{},[]]", "[[[]]]", "{\"\":{}}", "[null]", "[true,false,null]", "[ true , false , null ]",
    "{\"t\":true,\"f\":false,\"n\":null}", "{\"a\":[true,[false,[null]]]}", "\"\"", "\"abc\"", "\" \"", "0", "-0", "1", "-1", "1e400", "\"\\u0000\"", "[0,-0,0.0,-0.0]",
    "[1,2,3]", "[\"a\",\"b\"]", "{\"a\":1}", "[[1,2],[3,[4,[5]]]]"]) {
    addText(t);
  }

  // --- Integer-like keys mixed with other keys --------------------------------
  addText('{"b":1,"10":1,"2":2}');
  addText('{"z":0,"4294967295":1,"4294967294":2,"a":3}');
  addText('{"4294967295":1,"4294967294":2}');
  addText('{"4294967296":1,"4294967295":2,"4294967294":3,"0":4}');
  addText('{"01":1,"1":2,"-1":3,"1.5":4," 1":5,"1e3":6,"":7,"__proto__":8,"0":9}');
  addText('{"__proto__":{"x":1},"a":2}');
  addText('{"__proto__":null}');
  addText('{"__proto__":1,"__proto__":2}');
  addText('{"constructor":1,"toString":2,"hasOwnProperty":3,"valueOf":4}');
  addText('{"10":"a","9":"b","1":"c","0":"d","2":"e"}');
  addText('{"a":1,"\\u0031":2,"\\u0030":3}');
  addText('{"\\u0034\\u0032":1,"b":2,"42":3}');
  for (const k of ["0", "1", "9", "10", "4294967294", "4294967295", "01", "-1", "1.5", " 1", "1e3", "", "__proto__", "-0", "00", "+1", "1 "]) {
    addText(`{"x":1,${JSON.stringify(k)}:2,"y":3}`);
    addText(`{${JSON.stringify(k)}:"only"}`);
  }
  for (let i = 0; i < 110; i++) {
    const keys = rng.shuffle(INTEGERISH_KEYS).slice(0, rng.int(3, 12));
    if (rng.chance(0.3)) keys.push(String(rng.int(0, 4294967300)));
    if (rng.chance(0.3)) keys.push(rng.pick(["4294967294", "4294967295"]));
    const members = rng.shuffle(keys).map((k) => [strLit(k, strMode(), hexCaseChoice()), rng.chance(0.7) ? raw(String(rng.int(0, 99))) : randomValue(2, 3)]);
    addText(textOf(obj(members)));
  }
  // Integer-like keys also inside nested objects and arrays of objects.
  for (let i = 0; i < 30; i++) {
    const inner = () => obj(rng.shuffle(["2", "1", "b", "a", "10", "0", "4294967295"]).slice(0, rng.int(2, 6)).map((k) => [JSON.stringify(k), raw(String(rng.int(0, 9)))]));
    addText(textOf(obj([['"outer"', inner()], ['"3"', arr([inner(), inner()])], ['"1"', inner()]])));
  }

  // --- Duplicate keys -----------------------------------------------------------
  for (const t of [
    '{"a":1,"a":2}', '{"a":1,"b":2,"a":3}', '{"a":1,"b":2,"a":3,"c":4,"b":5}', '{"a":1,"a":2,"a":3}', '{"a":{"x":1},"a":{"y":2}}',
    '{"a":[1,2],"b":0,"a":"str"}', '{"a":null,"a":{"b":1,"b":2}}', '{"1":1,"0":0,"1":2}', '{"b":1,"2":2,"b":3,"2":4,"a":5}',
    '{"4294967295":1,"x":2,"4294967295":3}', '{"4294967294":1,"x":2,"4294967294":3}', '{"":1,"":2}', '{"a":1,"\\u0061":2}',
    '{"\\/":1,"/":2}', '{"é":1,"\\u00e9":2,"\\u00E9":3}', '{"😀":1,"\\ud83d\\ude00":2}', '{"\\ud800":1,"\\uD800":2}',
    '[{"a":1,"a":2},{"a":3,"b":4,"a":5}]', '{"x":{"a":1,"a":2},"x":{"b":3,"b":4}}', '{"01":1,"1":2,"01":3}', '{"a":true,"b":false,"a":null}',
  ]) {
    addText(t);
  }
  for (let i = 0; i < 50; i++) {
    const pool = rng.shuffle(["a", "b", "c", "0", "1", "10", "2", "4294967295", "x", "__proto__", "", "01"]).slice(0, rng.int(2, 5));
    const members = [];
    const n = rng.int(3, 10);
    for (let j = 0; j < n; j++) members.push([strLit(rng.pick(pool), strMode(), hexCaseChoice()), randomValue(2, 3)]);
    addText(textOf(obj(members)));
  }

  // --- Whitespace between every token ---------------------------------------------
  for (const t of [
    ' { "a" : 1 , "b" : [ 1 , 2 ] } ', '\t{\t"a"\t:\t1\t}\t', '\r{\r"a"\r:\r1\r}\r', '\n{\n"a"\n:\n1\n}\n', '\r\n[\r\n1\r\n,\r\n2\r\n]\r\n',
    ' \t\r\n[ \t\r\n] \t\r\n', '{"a" \t\r\n:\r\n\t [\n\n\n1\t\t\t]}', '[1 ,2 ,3 ]', '[ "x" , { } , [ ] , null ]',
  ]) {
    addText(t);
  }
  for (const style of ["space", "pretty", "prettyTabsCrlf", "random"]) {
    for (let i = 0; i < 12; i++) addText(textOf(randomObject(1, 4), style));
  }

  // --- String escapes -----------------------------------------------------------
  // Every ASCII char as a \u escape (lower and upper hex), each alone and all together.
  for (let c = 0; c < 0x80; c++) {
    addText(`"${"\\u" + c.toString(16).padStart(4, "0")}"`);
    if (/[a-f]/i.test(c.toString(16))) addText(`"${"\\u" + c.toString(16).padStart(4, "0").toUpperCase()}"`);
  }
  const ascii = strOfUnits(Array.from({ length: 128 }, (_, i) => i));
  addText(strLit(ascii, "allU", "lower"));
  addText(strLit(ascii, "allU", "upper"));
  addText(strLit(ascii, "allU", "mixed"));
  addText(strLit(ascii, "mixed", "random"));
  addText(JSON.stringify(ascii));
  const latin = strOfUnits(Array.from({ length: 128 }, (_, i) => 0x80 + i));
  addText(strLit(latin, "allU", "upper"));
  addText(JSON.stringify(latin));
  // Short escapes and \/.
  for (const t of ['"\\b"', '"\\f"', '"\\n"', '"\\r"', '"\\t"', '"\\""', '"\\\\"', '"\\/"', '"a\\/b"', '"\\/\\/\\/"', '"http:\\/\\/x.y\\/z"',
    '"\\b\\f\\n\\r\\t\\"\\\\\\/"', '"\\u0008\\u000c\\u000a\\u000d\\u0009\\u0022\\u005c\\u002f"', '"\\u000C\\u000A\\u000D\\u005C\\u002F"',
    '"\\u007f"', '"\\u007F"', '"\\u0080"', '"\\u00ff"', '"\\u00FF"', '"\\u0100"', '"\\u07ff"', '"\\u0800"', '"\\u2028"', '"\\u2029"',
    '"\\uFEFF"', '"\\ufeff"', '"\\uFFFD"', '"\\uFFFE"', '"\\uffff"', '"\\u0000"', '"\\u001f"', '"\\u001F"', '"\\u0020"', '"\\uAbCd"',
    '"\\uD83D\\uDE00"', '"\\ud83d\\ude00"', '"\\uD83d\\uDe00"', '"\\uDBFF\\uDFFF"', '"\\ud800\\udc00"', '"\\uD834\\uDD1E"',
    '"\\uD83D😀"', '"😀\\uDE00"', '"\\uD800\\uD800\\uDC00"', '"\\uDC00\\uD800"', '"a\\uD800"', '"\\uDFFFa"', '"\\uDBFF"', '"\\uDC00"',
    '"\\uD800"', '"\\uDFFF"', '"\\ud800"', '"\\udfff"', '"x\\ud800y\\udc00z"', '"\\ud800\\u0041"', '"\\u00e9\\u0301"',
    '"raw \u2028 and \u2029"', '"raw \u007f DEL"', '"raw \ufeff BOM"', '"raw 😀 astral"', '"\u{10ffff}"', '"\\u0022quoted\\u0022"',
  ]) {
    addText(t);
  }
  // Lone-surrogate escapes in strings and keys.
  for (const s of [0xd800, 0xd801, 0xdbff, 0xdc00, 0xdfff, 0xd83d, 0xde00]) {
    for (const hc of ["lower", "upper"]) {
      const e = `\\u${hex4(s, hc)}`;
      addText(`{"${e}":"${e}"}`);
      addText(`{"a${e}":1,"${e}b":2,"0":3}`);
      addText(`["${e}","x${e}y","${e}${e}"]`);
    }
  }
  for (let i = 0; i < 40; i++) {
    const lone = rng.chance(0.5) ? rng.int(0xd800, 0xdbff) : rng.int(0xdc00, 0xdfff);
    const s = randomString().slice(0, 6) + String.fromCharCode(lone) + randomString().slice(0, 6);
    const k = String.fromCharCode(rng.int(0xd800, 0xdfff)) + randomString().slice(0, 4);
    addText(textOf(obj([[strLit(k, rng.pick(["canonical", "mixed", "allU"]), hexCaseChoice()), raw(strLit(s, strMode(), hexCaseChoice()))], ['"n"', randomNumberNode()]])));
  }
  // Random strings with random escape styles (top level, in arrays, as keys).
  for (let i = 0; i < 100; i++) {
    const s = randomString();
    const lit = strLit(s, strMode(), hexCaseChoice());
    addText(rng.weighted([[3, lit], [2, `[${lit}]`], [2, `{${lit}:${strLit(randomString(), strMode(), hexCaseChoice())}}`]]));
  }
  // Long strings (2..4 KiB) with escapes.
  for (const [n, mode] of [[2048, "mixed"], [3000, "canonical"], [1024, "allU"], [4000, "mixed"]]) {
    addText(strLit(strOfUnits(randomUnits(n)), mode, "random"));
  }

  // --- Number spellings ---------------------------------------------------------
  for (const t of FIXED_NUMBER_TEXTS) {
    addText(t);
    addText(`[${t}]`);
  }
  for (let i = 0; i < 80; i++) addText(randomNumberText());
  for (let i = 0; i < 50; i++) {
    addText(textOf(arr(Array.from({ length: rng.int(1, 8) }, () => randomNumberNode()))));
  }
  for (let i = 0; i < 60; i++) {
    const x = rng.weighted([
      [3, Number(`${rng.digits(rng.int(1, 17), true)}e${rng.int(-25, 25)}`)],
      [1, rng.int(0, 2 ** 31)],
      [1, 3e-6 * rng.int(1, 60)],
      [1, (rng.pick([3, 15, 0.3, 1.25]) / 1e6) * rng.int(1, 5000)],
    ]) * (rng.chance(0.2) ? -1 : 1);
    addText(textOf(obj([['"v"', raw(altNumber(x))], ['"w"', raw(altNumber(x))]])));
  }

  // --- Nesting depth 1..300 -----------------------------------------------------
  for (const d of [1, 2, 3, 4, 5, 8, 10, 16, 20, 32, 50, 64, 100, 127, 128, 129, 200, 255, 256, 299, 300]) {
    addText("[".repeat(d) + "]".repeat(d));
    addText("[".repeat(d) + "0" + "]".repeat(d));
    addText('{"a":'.repeat(d) + "{}" + "}".repeat(d));
    addText('{"a":'.repeat(d) + "1" + "}".repeat(d));
    // alternating arrays/objects
    let t = "null";
    for (let i = 0; i < d; i++) t = i % 2 === 0 ? `[${t}]` : `{"${i % 7}":${t},"k":${i}}`;
    addText(t);
  }
  for (let i = 0; i < 10; i++) {
    const d = rng.int(1, 300);
    let node = randomValue(3, 3);
    for (let j = 0; j < d; j++) {
      node = rng.chance(0.5) ? arr([node]) : obj([[randomKeyLit(), node]]);
    }
    addText(textOf(node, rng.pick(["none", "space", "random"])));
  }

  // --- Random nested documents ---------------------------------------------------
  for (let i = 0; i < 150; i++) {
    addText(textOf(rng.chance(0.7) ? randomObject(0, rng.int(1, 5)) : arr(Array.from({ length: rng.int(0, 6) }, () => randomValue(1, rng.int(1, 5))))));
  }

  // --- Transcript-like rows -------------------------------------------------------
  const prices = [[3, 15, 0.3, 3.75], [0.8, 4, 0.08, 1], [15, 75, 1.5, 18.75], [1.25, 10, 0.125, 0], [0.15, 0.6, 0.075, 0]];
  for (let i = 0; i < 24; i++) {
    const p = rng.pick(prices);
    const usage = { input: rng.int(0, 40), output: rng.int(1, 4000), cacheRead: rng.pick([0, rng.int(1000, 90000)]), cacheWrite: rng.pick([0, rng.int(100, 20000)]) };
    const cost = [usage.input, usage.output, usage.cacheRead, usage.cacheWrite].map((n, j) => (p[j] / 1000000) * n);
    const total = cost[0] + cost[1] + cost[2] + cost[3];
    // Numbers are written in exponent / alternative spellings in the input.
    const num = (x) => raw(rng.chance(0.8) ? altNumber(x) : JSON.stringify(x));
    const id = () => JSON.stringify((rng.u32() >>> 0).toString(16).padStart(8, "0"));
    const toolArgs = obj([['"path"', raw('"src\\/main.rs"')], ['"2"', raw('"second"')], ['"oldText"', randomStringNode()], ['"1"', raw('"first"')], ['"limit"', num(rng.int(1, 500))]]);
    const message = obj([
      ['"role"', raw('"assistant"')],
      ['"content"', arr([
        obj([['"type"', raw('"text"')], ['"text"', randomStringNode(rng.pick(["Done.", "Let me look at that file.", "Résumé ✓ → next 😀", "line1\nline2\t\"quoted\""]))]]),
        obj([['"type"', raw('"toolCall"')], ['"id"', raw(JSON.stringify(`toolu_${i}`))], ['"name"', raw('"edit"')], ['"arguments"', toolArgs]]),
      ])],
      ['"api"', raw('"anthropic-messages"')],
      ['"provider"', raw('"anthropic"')],
      ['"model"', raw('"claude-sonnet-4-5"')],
      ['"usage"', obj([
        ['"input"', num(usage.input)], ['"output"', num(usage.output)], ['"cacheRead"', raw(usage.cacheRead === 0 ? rng.pick(["0", "0.0", "0e0", "-0"]) : altNumber(usage.cacheRead))],
        ['"cacheWrite"', num(usage.cacheWrite)], ['"totalTokens"', num(usage.input + usage.output + usage.cacheRead + usage.cacheWrite)],
        ['"cost"', obj([['"input"', num(cost[0])], ['"output"', num(cost[1])], ['"cacheRead"', num(cost[2])], ['"cacheWrite"', num(cost[3])], ['"total"', num(total)]])],
      ])],
      ['"stopReason"', raw(rng.pick(['"toolUse"', '"stop"', '"aborted"']))],
      ['"timestamp"', num(1742078418000 + rng.int(0, 1e8))],
    ]);
    const entry = obj([
      ['"type"', raw('"message"')], ['"id"', raw(id())], ['"parentId"', raw(rng.chance(0.1) ? "null" : id())],
      ['"timestamp"', raw('"2026-03-15T22:40:18.123Z"')], ['"message"', message],
    ]);
    addText(textOf(entry, rng.pick(["none", "none", "space", "random"])));
  }
  addText('{"type":"message","id":"5aae3765","parentId":null,"timestamp":"2026-03-15T22:40:18.123Z","message":{"role":"assistant","content":[],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":3,"output":7,"cacheRead":0,"cacheWrite":0,"cost":{"input":9e-6,"output":1.05e-4,"cacheRead":0.0,"cacheWrite":0E0,"total":1.1400000000000001e-4}},"stopReason":"aborted","timestamp":1742078418000,"errorMessage":"aborted"}}');
  addText('{"type":"message","id":"a1b2c3d4","parentId":"5aae3765","timestamp":"2026-03-15T22:40:19.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input":7,"output":1,"cost":{"input":2.1000000000000002e-05,"output":1.5E-05,"total":3.6000000000000005e-5}},"stopReason":"stop","timestamp":1.742078419e12}}');
  addText('{"type":"session","id":"019a1b2c-3d4e-7f00-8000-000000000000","timestamp":"2026-03-15T22:40:18.000Z","cwd":"\\/home\\/user\\/proj","provider":"anthropic","modelId":"claude-sonnet-4-5","thinkingLevel":"off"}');
  addText('{"type":"message","id":"0badf00d","parentId":"a1b2c3d4","timestamp":"2026-03-15T22:40:20.000Z","message":{"role":"toolResult","toolCallId":"toolu_01","toolName":"bash","content":[{"type":"text","text":"\\u001b[32mok\\u001b[0m\\r\\n"}],"details":{},"isError":false,"timestamp":1742078420000}}');
  addText('{"type":"custom","customType":"ext","data":{"2":"b","1":"a","name":"x","1":"A"},"id":"deadbeef","parentId":"0badf00d","timestamp":"2026-03-15T22:40:21.000Z"}');
  addText('{"type":"compaction","timestamp":"2026-03-15T22:40:22.000Z","summary":"S","firstKeptEntryIndex":293,"tokensBefore":1.2345e5,"id":"cafebabe","parentId":"deadbeef"}');
}

// ===========================================================================
// Main
// ===========================================================================

genNumbers();
genStrings();
genTexts();

const records = [...numberRecords, ...stringRecords, ...textRecords];
const lines = records.map((r) => {
  const line = JSON.stringify(r);
  // The corpus itself must be well-formed UTF-8 JSONL: no raw lone surrogates
  // anywhere, one record per line.
  if (!isWellFormed(line)) throw new Error(`record is not well-formed Unicode: ${line.slice(0, 200)}`);
  if (line.includes("\n") || line.includes("\r")) throw new Error("record contains a raw line break");
  for (const v of Object.values(r)) {
    if (typeof v === "string" && !isWellFormed(v)) throw new Error(`string field is not well-formed: ${line.slice(0, 200)}`);
  }
  // Independent sanity checks of each record against its own definition.
  const back = JSON.parse(line);
  if (back.kind === "number" && JSON.stringify(fromBits(BigInt("0x" + back.bits))) !== back.expected) throw new Error(`number mismatch ${line}`);
  if (back.kind === "string" && JSON.stringify(strOfUnits(back.units)) !== back.expected) throw new Error(`string mismatch ${line.slice(0, 200)}`);
  if (back.kind === "text" && JSON.stringify(JSON.parse(back.input)) !== back.expected) throw new Error(`text mismatch ${line.slice(0, 200)}`);
  return line;
});
const content = lines.join("\n") + "\n";
const bytes = Buffer.byteLength(content, "utf8");

const counts = { number: numberRecords.length, string: stringRecords.length, text: textRecords.length };
for (const [k, n] of Object.entries(counts)) {
  if (n < MIN_PER_KIND) throw new Error(`only ${n} ${k} records (need >= ${MIN_PER_KIND})`);
}
if (records.length < MIN_TOTAL) throw new Error(`only ${records.length} records (need >= ${MIN_TOTAL})`);
if (bytes > MAX_BYTES) throw new Error(`corpus is ${bytes} bytes (limit ${MAX_BYTES})`);

const sha = createHash("sha256").update(content, "utf8").digest("hex");
const rel = relative(process.cwd(), OUT_PATH) || OUT_PATH;
if (process.argv.includes("--check")) {
  let existing = null;
  try {
    existing = readFileSync(OUT_PATH, "utf8");
  } catch {
    // missing file: treated as a mismatch below
  }
  if (existing !== content) {
    console.error(`${rel} is out of date; regenerate with: node xtask/node/gen-json-corpus.mjs`);
    process.exit(1);
  }
  console.log(`${rel} is up to date (${records.length} records, ${bytes} bytes, sha256 ${sha})`);
} else {
  mkdirSync(dirname(OUT_PATH), { recursive: true });
  writeFileSync(OUT_PATH, content, "utf8");
  console.log(`wrote ${rel}: ${records.length} records (number ${counts.number}, string ${counts.string}, text ${counts.text}), ${bytes} bytes, sha256 ${sha}, node ${process.version}`);
}
