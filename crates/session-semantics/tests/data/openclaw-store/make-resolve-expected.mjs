// Runs the key-resolution cases of tests/it/openclaw_store_resolve.rs through OpenClaw
// 2026.6.11's own `resolveSessionStoreEntry` and prints the results as JSON (see ../README.md).
// Usage: node make-resolve-expected.mjs <openclaw dist dir> > resolve-expected.json
// Each stored entry carries a `marker` field naming its key, so `existingKey` says which won.
const dist = process.argv[2];
const { et: resolveSessionStoreEntry } = await import(`${dist}/store-jR_nVe0n.js`);

const mark = (entries) =>
  Object.fromEntries(Object.entries(entries).map(([key, entry]) => [key, { marker: key, ...entry }]));

const room = "agent:main:matrix:channel:!RoomId:server";
const roomLower = "agent:main:matrix:channel:!roomid:server";
const stores = {
  ordinary: {
    "agent:main:telegram:direct:bob": { sessionId: "exact", updatedAt: 100 },
    "agent:main:Telegram:Direct:Bob": { sessionId: "mixed", updatedAt: 300 },
    "agent:main:TELEGRAM:direct:bob": { sessionId: "upper", updatedAt: 200 },
    "agent:main:slack:direct:amy": { sessionId: "amy", updatedAt: 50 },
  },
  ordinary_ties: {
    "agent:main:Slack:Direct:Amy": { sessionId: "mixed", updatedAt: 100 },
    "agent:main:slack:direct:amy": { sessionId: "exact", updatedAt: 100 },
    "agent:main:SLACK:direct:amy": { sessionId: "upper", updatedAt: 100 },
    "agent:main:cron:Job": { sessionId: "cron-a" },
    "agent:main:CRON:job": { sessionId: "cron-b" },
  },
  ordinary_no_exact: {
    "agent:main:Discord:Channel:General": { sessionId: "d1", updatedAt: 10 },
    "agent:main:DISCORD:channel:general": { sessionId: "d2", updatedAt: 20 },
    " agent:main:discord:channel:general ": { sessionId: "spaced", updatedAt: 30 },
  },
  trimmed_raw: {
    "agent:main:Telegram:Direct:Carol": { sessionId: "raw", updatedAt: 500 },
    "agent:main:telegram:direct:carol": { sessionId: "exact", updatedAt: 400 },
  },
  matrix_exact_and_folded: {
    [room]: { sessionId: "exact", updatedAt: 100 },
    [roomLower]: { sessionId: "folded", updatedAt: 900, deliveryContext: { channel: "matrix", to: "room:!RoomId:server" } },
  },
  matrix_folded_proofs: {
    [roomLower]: { sessionId: "folded", updatedAt: 900, deliveryContext: { channel: "matrix", to: "room:!RoomId:server" } },
  },
  matrix_folded_last_to: {
    [roomLower]: { sessionId: "folded", updatedAt: 900, lastTo: "  !RoomId:server " },
  },
  matrix_folded_origin: {
    [roomLower]: { sessionId: "folded", updatedAt: 900, origin: { nativeChannelId: "!RoomId:server" } },
  },
  matrix_folded_origin_to_and_group: {
    "agent:main:matrix:group:#alias:server": { sessionId: "alias", updatedAt: 5, origin: { to: "matrix:#Alias:server" } },
    "agent:main:matrix:group:!grp:server": { sessionId: "grp", updatedAt: 6, groupId: "!Grp:server" },
  },
  matrix_folded_no_proof: {
    [roomLower]: { sessionId: "folded", updatedAt: 900 },
  },
  matrix_folded_other_room: {
    [roomLower]: { sessionId: "folded", updatedAt: 900, deliveryContext: { to: "room:!roomid:server" } },
  },
  matrix_exact_mismatched: {
    [room]: { sessionId: "exact", updatedAt: 100, deliveryContext: { to: "!Other:server" } },
    [roomLower]: { sessionId: "folded", updatedAt: 50, lastTo: "!RoomId:server" },
  },
  matrix_variants: {
    "agent:main:Matrix:Channel:!RoomId:server": { sessionId: "variant-new", updatedAt: 700 },
    "AGENT:main:matrix:channel:!RoomId:server": { sessionId: "variant-old", updatedAt: 600, lastTo: "!RoomId:server" },
    "agent:main:MATRIX:channel:!RoomId:server": { sessionId: "variant-bad", updatedAt: 800, lastTo: "!Elsewhere:server" },
    [room]: { sessionId: "exact", updatedAt: 10 },
  },
  matrix_variants_no_exact: {
    "agent:main:Matrix:Channel:!RoomId:server": { sessionId: "variant-a", updatedAt: 700 },
    "agent:main:MATRIX:channel:!RoomId:server": { sessionId: "variant-b", updatedAt: 800 },
    [roomLower]: { sessionId: "folded", updatedAt: 750, lastTo: "!RoomId:server" },
  },
  matrix_threads: {
    "agent:main:matrix:channel:!roomid:server:thread:$Ev1": { sessionId: "t-match", updatedAt: 10, deliveryContext: { to: "!RoomId:server", threadId: "$Ev1" } },
    "agent:main:matrix:channel:!roomid:server:thread:$ev1": { sessionId: "t-lower", updatedAt: 20, lastTo: "!RoomId:server", lastThreadId: "$ev1" },
    "agent:main:matrix:channel:!roomid:server:thread:$Ev2": { sessionId: "t-other", updatedAt: 30, lastTo: "!RoomId:server", lastThreadId: " $Ev3 " },
    "agent:main:matrix:channel:!roomid:server:thread:42": { sessionId: "t-num", updatedAt: 40, lastTo: "!RoomId:server", origin: { threadId: 42 } },
    "agent:main:matrix:channel:!roomid:server:thread:7": { sessionId: "t-none", updatedAt: 50, lastTo: "!RoomId:server" },
  },
  matrix_thread_exact_mismatch: {
    "agent:main:matrix:channel:!RoomId:server:thread:$Ev1": { sessionId: "exact", updatedAt: 1, deliveryContext: { threadId: "$Ev9" } },
    "agent:main:matrix:channel:!roomid:server:thread:$Ev1": { sessionId: "folded", updatedAt: 2, lastTo: "!RoomId:server", lastThreadId: "$Ev1" },
  },
  matrix_trimmed_raw: {
    "Agent:Main:matrix:channel:!RoomId:server": { sessionId: "raw", updatedAt: 5, lastTo: "!RoomId:server" },
    [roomLower]: { sessionId: "folded", updatedAt: 9, lastTo: "!RoomId:server" },
  },
  matrix_trimmed_raw_mismatched: {
    "Agent:Main:matrix:channel:!RoomId:server": { sessionId: "raw", updatedAt: 5, lastTo: "!Other:server" },
    [roomLower]: { sessionId: "folded", updatedAt: 9, lastTo: "!RoomId:server" },
  },
  signal_groups: {
    "agent:main:signal:group:AbC+dEf=": { sessionId: "exact", updatedAt: 10 },
    "agent:main:signal:group:abc+def=": { sessionId: "folded", updatedAt: 20 },
    "agent:main:Signal:Group:AbC+dEf=": { sessionId: "variant", updatedAt: 15 },
    "agent:main:signal:group:Other=": { sessionId: "other", updatedAt: 99 },
  },
  blank_keys: {
    "": { sessionId: "empty", updatedAt: 1 },
    "  ": { sessionId: "spaces", updatedAt: 2 },
  },
  signal_folded_only: {
    "agent:main:signal:group:abc+def=": { sessionId: "folded", updatedAt: 20, lastTo: "group:Unrelated" },
  },
};

const requests = {
  ordinary: ["agent:main:telegram:direct:bob", "AGENT:MAIN:TELEGRAM:DIRECT:BOB", "agent:main:Telegram:Direct:Bob", "agent:main:slack:direct:amy", "agent:main:slack:direct:zed"],
  ordinary_ties: ["agent:main:slack:direct:amy", "agent:main:SLACK:DIRECT:AMY", "agent:main:cron:job"],
  ordinary_no_exact: ["agent:main:discord:channel:general", "  Agent:Main:Discord:Channel:General\t"],
  trimmed_raw: ["  agent:main:Telegram:Direct:Carol  ", "agent:main:telegram:direct:carol"],
  matrix_exact_and_folded: [room, ` ${room} `, roomLower],
  matrix_folded_proofs: [room, "agent:main:matrix:channel:!ROOMID:server"],
  matrix_folded_last_to: [room],
  matrix_folded_origin: [room],
  matrix_folded_origin_to_and_group: ["agent:main:matrix:group:#Alias:server", "agent:main:matrix:group:!Grp:server", "agent:main:matrix:group:!GRP:server"],
  matrix_folded_no_proof: [room],
  matrix_folded_other_room: [room],
  matrix_exact_mismatched: [room],
  matrix_variants: [room],
  matrix_variants_no_exact: [room],
  matrix_threads: [
    "agent:main:matrix:channel:!RoomId:server:thread:$Ev1",
    "agent:main:matrix:channel:!RoomId:server:thread:$ev1",
    "agent:main:matrix:channel:!RoomId:server:thread:$Ev2",
    "agent:main:matrix:channel:!RoomId:server:thread:42",
    "agent:main:matrix:channel:!RoomId:server:thread:7",
    "agent:main:matrix:channel:!RoomId:server:THREAD:$Ev1",
  ],
  matrix_thread_exact_mismatch: ["agent:main:matrix:channel:!RoomId:server:thread:$Ev1"],
  matrix_trimmed_raw: [" Agent:Main:matrix:channel:!RoomId:server "],
  matrix_trimmed_raw_mismatched: ["Agent:Main:matrix:channel:!RoomId:server"],
  signal_groups: ["agent:main:signal:group:AbC+dEf=", "AGENT:MAIN:SIGNAL:GROUP:AbC+dEf=", "agent:main:signal:group:abc+def=", "agent:main:signal:group:other="],
  signal_folded_only: ["agent:main:signal:group:AbC+dEf="],
  blank_keys: ["", " \t "],
};

const cases = [];
for (const [name, entries] of Object.entries(stores)) {
  const store = mark(entries);
  for (const key of requests[name]) {
    const { normalizedKey, existing, legacyKeys } = resolveSessionStoreEntry({ store: structuredClone(store), sessionKey: key });
    cases.push({ name, store, key, normalizedKey, existingKey: existing?.marker ?? null, legacyKeys });
  }
}
process.stdout.write(JSON.stringify(cases, null, 2) + "\n");
