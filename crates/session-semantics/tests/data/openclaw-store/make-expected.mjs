// Runs the merge and entry-write cases of tests/it/openclaw_store_merge.rs through OpenClaw
// 2026.6.11's own functions and prints the results as JSON (see ../README.md).
// Usage: node make-expected.mjs <openclaw dist dir> > merge-expected.json
// with NODE_OPTIONS=--import=<fixtures>/openclaw-6.11-store/fake-clock.mjs OC_FAKE_NOW=2026-06-12T13:00:00Z
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
const dist = process.argv[2];
const { a: mergeSessionEntryWithPolicy, p: rewriteSessionFileForNewSessionId } = await import(`${dist}/types-CoDcFuoc.js`);
const { v: updateSessionStoreEntry } = await import(`${dist}/store-jR_nVe0n.js`);
const now = Date.parse("2026-06-12T13:00:00.000Z");
const cases = [
  { name: "future_patch_updated_at_is_clamped_to_now", existing: { sessionId: "s1", updatedAt: now - 5000, label: "a" }, patch: { updatedAt: now + 60000 } },
  { name: "existing_future_updated_at_comes_back_to_now", existing: { sessionId: "s1", updatedAt: now + 5000 }, patch: { label: "b" } },
  { name: "invalid_updated_at_inputs_are_ignored", existing: { sessionId: "s1", updatedAt: "x" }, patch: { updatedAt: -3 } },
  { name: "preserve_activity_keeps_the_existing_updated_at", policy: "preserve-activity", existing: { sessionId: "s1", updatedAt: now - 7000 }, patch: { updatedAt: now - 10, lastChannel: "slack" } },
  { name: "preserve_activity_without_existing_updated_at_takes_the_patch", policy: "preserve-activity", existing: { sessionId: "s1" }, patch: { updatedAt: now - 10 } },
  { name: "same_id_keeps_session_started_at", existing: { sessionId: "s1", updatedAt: now - 9000, sessionStartedAt: now - 9000 }, patch: { sessionId: "s1", totalTokens: 5 } },
  { name: "same_id_without_started_at_stays_without", existing: { sessionId: "s1", updatedAt: now - 9000 }, patch: { totalTokens: 5 } },
  { name: "new_id_resets_started_at_and_rewrites_the_file", existing: { sessionId: "old", updatedAt: now - 9000, sessionStartedAt: now - 9000, sessionFile: "/st/agents/main/sessions/old.jsonl" }, patch: { sessionId: "new" } },
  { name: "new_id_rewrites_a_topic_file", existing: { sessionId: "old", sessionFile: "old-topic-7.jsonl", updatedAt: 1 }, patch: { sessionId: "new" } },
  { name: "new_id_rewrites_a_fork_file", existing: { sessionId: "old", sessionFile: "a/./b/2026-06-11T09-00-00-000Z_old.jsonl", updatedAt: 1 }, patch: { sessionId: "new" } },
  { name: "new_id_rewrites_the_patchs_file", existing: { sessionId: "old", sessionFile: "x.jsonl", updatedAt: 1 }, patch: { sessionId: "new", sessionFile: "old.jsonl" } },
  { name: "new_id_leaves_another_file_name", existing: { sessionId: "old", sessionFile: "other.jsonl", updatedAt: 1 }, patch: { sessionId: "new" } },
  { name: "model_change_without_provider_drops_the_provider", existing: { sessionId: "s1", updatedAt: 1, model: "gpt-5.5", modelProvider: "openai" }, patch: { model: " claude-x " } },
  { name: "same_model_keeps_the_provider", existing: { sessionId: "s1", updatedAt: 1, model: "gpt-5.5", modelProvider: "openai" }, patch: { model: "gpt-5.5" } },
  { name: "empty_model_removes_both", existing: { sessionId: "s1", updatedAt: 1, model: "gpt-5.5", modelProvider: "openai" }, patch: { model: "  " } },
  { name: "new_row_orders_patch_then_id_times", existing: null, patch: { label: "l", sessionId: "n1", chatType: "direct" } },
  { name: "null_session_started_at_counts_as_absent", existing: { sessionId: "s1", updatedAt: 1, sessionStartedAt: 5 }, patch: { sessionStartedAt: null } },
];
const merges = cases.map((c) => ({
  ...c,
  existing: c.existing ?? null,
  policy: c.policy ?? "touch",
  now,
  result: mergeSessionEntryWithPolicy(c.existing ?? undefined, c.patch, { now, policy: c.policy }),
}));
// An entry write addressed by the lowercase key on a store holding two case variants.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "oc-upsert-"));
const storePath = path.join(dir, "sessions.json");
const before = {
  "agent:main:cron:job": { sessionId: "c1", updatedAt: now - 1000 },
  "agent:main:Telegram:Direct:Bob": { sessionId: "b-old", updatedAt: now - 3000, label: "older" },
  "agent:main:TELEGRAM:direct:bob": { sessionId: "b-new", updatedAt: now - 2000, label: "newer", chatType: "direct" },
  "agent:main:slack:direct:amy": { sessionId: "a1", updatedAt: now - 500 },
};
fs.writeFileSync(storePath, JSON.stringify(before, null, 2));
await updateSessionStoreEntry({ storePath, sessionKey: "agent:main:telegram:direct:bob", update: async () => ({ label: "patched", totalTokens: 12 }), skipMaintenance: true });
const upsert = { before, requested: "agent:main:telegram:direct:bob", patch: { label: "patched", totalTokens: 12 }, now, after: fs.readFileSync(storePath, "utf8") };
fs.rmSync(dir, { recursive: true, force: true });
process.stdout.write(JSON.stringify({ merges, upsert }, null, 2) + "\n");
