//! The Lua scripts of the Redis backend (run with `EVALSHA`, loaded on `NOSCRIPT`). Every
//! script takes the keys of one session (all in one hash slot, see [`super::keys`]):
//! `KEYS[1]` meta hash, `KEYS[2]` header, `KEYS[3]` lines, `KEYS[4]` directory index (lock
//! scripts: `KEYS[1]` the lock key).
//!
//! Replies of the session scripts are arrays `{status, g, v, n, t, ...}`: status 1 done,
//! 0 no session, -1 refused by the fence (or by "exists" for create), followed by the
//! session's state after the call (or the state that made it refuse).

/// Shared helpers: the server clock, the state, line splitting and pushing. Numbers are
/// written with `%d` (Lua 5.1 would print large ones in exponent form) and stay below 2^53
/// (microseconds since the epoch, byte lengths), so Lua's doubles hold them exactly.
const PRELUDE: &str = r#"
local M, H, L, Z = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local function d(x) return string.format('%d', x) end
-- Microseconds since the epoch (server clock), above prev when given.
local function stamp(prev)
  local t = redis.call('TIME')
  local us = tonumber(t[1]) * 1000000 + tonumber(t[2])
  if prev and us <= prev then us = prev + 1 end
  return us
end
local function state()
  local s = redis.call('HMGET', M, 'g', 'v', 'n', 't')
  if not s[1] then return nil end
  return {g = s[1], v = tonumber(s[2]), n = tonumber(s[3]), t = tonumber(s[4])}
end
local function reply(status, s)
  if not s then return {status} end
  return {status, s.g, s.v, s.n, s.t}
end
local function fenced(s, eg, ev, en)
  if eg ~= '' and s.g ~= eg then return false end
  if ev >= 0 and s.v ~= ev then return false end
  if en >= 0 and s.n ~= en then return false end
  return true
end
-- Lines of b (without their \n) and 1 when b does not end in \n.
local function split(b)
  local segs, pos, len = {}, 1, #b
  while pos <= len do
    local e = string.find(b, '\n', pos, true)
    if not e then
      segs[#segs + 1] = string.sub(b, pos)
      return segs, 1
    end
    segs[#segs + 1] = string.sub(b, pos, e - 1)
    pos = e + 1
  end
  return segs, 0
end
-- Stores segs[from..]: the first as the header when there is none yet, the rest in the list.
local function push(segs, from, has_header)
  local i = from
  if not has_header and i <= #segs then
    redis.call('SET', H, segs[i])
    i = i + 1
  end
  while i <= #segs do
    local j = math.min(i + 999, #segs)
    redis.call('RPUSH', L, unpack(segs, i, j))
    i = j + 1
  end
end
-- Writes the state s (its v a fresh stamp) and the directory index entry.
local function touch(s, member, created)
  local ms = math.floor(s.v / 1000)
  redis.call('HSET', M, 'g', s.g, 'v', d(s.v), 'n', d(s.n), 't', d(s.t), 'a', d(ms))
  if created then redis.call('HSET', M, 'c', d(ms)) end
  redis.call('ZADD', Z, d(ms), member)
end
-- True when the stored bytes start with p (while fewer bytes than #p are gathered and the
-- session is at least #p long, the line gathered last is followed by a \n).
local function starts_with(s, p)
  if #p == 0 then return true end
  if s.n < #p then return false end
  local parts = {redis.call('GET', H) or ''}
  local have = #parts[1]
  local i = 0
  while have < #p do
    parts[#parts + 1] = '\n'
    have = have + 1
    if have >= #p then break end
    local seg = redis.call('LINDEX', L, i)
    i = i + 1
    parts[#parts + 1] = seg
    have = have + #seg
  end
  return string.sub(table.concat(parts), 1, #p) == p
end
"#;

/// Create-if-absent. `ARGV`: new generation, bytes, index member, change stamp (microseconds
/// since the epoch, at least 1; `''`: the server's clock now). Refuses (-1) when the session
/// exists.
const CREATE: &str = r#"
local s = state()
if s then return reply(-1, s) end
redis.call('DEL', H, L)
local segs, t = split(ARGV[2])
push(segs, 1, false)
local v = tonumber(ARGV[4])
if not v or v < 1 then v = stamp(nil) end
s = {g = ARGV[1], v = v, n = #ARGV[2], t = t}
touch(s, ARGV[3], true)
return reply(1, s)
"#;

/// Fenced append. `ARGV`: expected generation (`''` any), expected version (-1 any), expected
/// length (-1 any), fence mode (`exact`: refuse when version or length differ; `head`: when
/// they differ, refuse only when the bytes no longer start with `ARGV[5]`), expected first
/// bytes, write mode (`line`: the bytes are one line with its `\n`, preceded by a `\n`
/// separator when the session ends in a torn line; `raw`: bytes as given), bytes, index
/// member, generation for a session created when missing (`''`: refuse when missing).
/// Reply: `{1, g, v, n, t, separator, g0, v0, n0, t0}` (after, then before; no before when
/// the append created the session).
const APPEND: &str = r#"
local s = state()
local created = false
if not s then
  if ARGV[9] == '' then return {0} end
  s = {g = ARGV[9], v = 0, n = 0, t = 0}
  created = true
  redis.call('DEL', H, L)
elseif not fenced(s, ARGV[1], -1, -1) then
  return reply(-1, s)
elseif not fenced(s, '', tonumber(ARGV[2]), tonumber(ARGV[3])) then
  if ARGV[4] == 'exact' or not starts_with(s, ARGV[5]) then return reply(-1, s) end
end
local before = {s.g, s.v, s.n, s.t}
local b = ARGV[7]
local sep = 0
if ARGV[6] == 'line' and s.t == 1 then
  sep = 1
  s.t = 0
  s.n = s.n + 1
end
local segs, t = split(b)
if #segs > 0 then
  local i = 1
  if s.t == 1 then
    if redis.call('LLEN', L) > 0 then
      redis.call('LSET', L, -1, redis.call('LINDEX', L, -1) .. segs[1])
    else
      redis.call('SET', H, redis.call('GET', H) .. segs[1])
    end
    i = 2
  end
  push(segs, i, s.n > 0)
  s.n = s.n + #b
  s.t = t
end
if #segs > 0 or sep == 1 or created then
  s.v = stamp(s.v)
  touch(s, ARGV[8], created)
end
local r = reply(1, s)
r[6] = sep
if not created then
  for k = 1, 4 do r[6 + k] = before[k] end
end
return r
"#;

/// Replace (or create) with new bytes and a new generation. `ARGV`: expected generation (`''`
/// any, `'-'` must not exist), expected version (-1 any), new generation, bytes, index member.
const REPLACE: &str = r#"
local s = state()
if s then
  if ARGV[1] == '-' or not fenced(s, ARGV[1], tonumber(ARGV[2]), -1) then return reply(-1, s) end
elseif ARGV[1] ~= '' and ARGV[1] ~= '-' then
  return {0}
end
redis.call('DEL', H, L)
local segs, t = split(ARGV[4])
push(segs, 1, false)
local ns = {g = ARGV[3], v = stamp(s and s.v), n = #ARGV[4], t = t}
touch(ns, ARGV[5], s == nil)
return reply(1, ns)
"#;

/// Fenced delete. `ARGV`: expected generation (`''` any), version and length (-1 any), index
/// member.
const REMOVE: &str = r#"
local s = state()
if not s then return {0} end
if not fenced(s, ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])) then return reply(-1, s) end
redis.call('DEL', M, H, L)
redis.call('ZREM', Z, ARGV[4])
return reply(1, s)
"#;

/// Reads byte ranges, all from one state: `ARGV` holds pairs (offset, length; -1: to the end).
/// Each range walks the lines from its nearer end. Reply: `{1, g, v, n, t, bytes...}` (one
/// string per range, cut at the end of the session).
const READ: &str = r#"
local s = state()
if not s then return {0} end
local n, t = s.n, s.t
local r = reply(1, s)
local ll = redis.call('LLEN', L)
local CHUNK = 256
local function range(off, want)
  local we = n
  if want >= 0 then we = math.min(n, off + want) end
  if off >= we then return '' end
  if off == 0 and we == n then
    local parts = redis.call('LRANGE', L, 0, -1)
    table.insert(parts, 1, redis.call('GET', H))
    if t == 0 then parts[#parts + 1] = '' end
    return table.concat(parts, '\n')
  end
  local out = {}
  -- Appends the part of line seg (starting at byte st, followed by \n when nl) in [off, we).
  local function take(seg, st, nl)
    local e = st + #seg
    local a, b = math.max(off, st), math.min(we, e)
    if a < b then out[#out + 1] = string.sub(seg, a - st + 1, b - st) end
    if nl and e >= off and e < we then out[#out + 1] = '\n' end
  end
  if off * 2 < n then
    local hdr = redis.call('GET', H)
    local nl = not (ll == 0 and t == 1)
    take(hdr, 0, nl)
    local pos = #hdr + (nl and 1 or 0)
    local i = 0
    while pos < we and i < ll do
      local items = redis.call('LRANGE', L, i, i + CHUNK - 1)
      for k = 1, #items do
        local seg = items[k]
        local nl2 = not (i + k == ll and t == 1)
        take(seg, pos, nl2)
        pos = pos + #seg + (nl2 and 1 or 0)
        if pos >= we then break end
      end
      i = i + CHUNK
    end
  else
    local found = {}
    local pos = n
    local hi = ll - 1
    while pos > off and hi >= 0 do
      local lo = math.max(0, hi - CHUNK + 1)
      local items = redis.call('LRANGE', L, lo, hi)
      for k = #items, 1, -1 do
        local seg = items[k]
        local nl = not (lo + k == ll and t == 1)
        local st = pos - #seg - (nl and 1 or 0)
        found[#found + 1] = {seg, st, nl}
        pos = st
        if pos <= off then break end
      end
      hi = lo - 1
    end
    if pos > off then
      found[#found + 1] = {redis.call('GET', H), 0, not (ll == 0 and t == 1)}
    end
    for k = #found, 1, -1 do take(found[k][1], found[k][2], found[k][3]) end
  end
  return table.concat(out)
end
for k = 1, #ARGV, 2 do
  r[#r + 1] = range(math.max(tonumber(ARGV[k]), 0), tonumber(ARGV[k + 1]))
end
return r
"#;

/// Lock renewal: `PEXPIRE` when the lock still holds our token. `ARGV`: token, ttl ms.
pub(crate) const LOCK_RENEW: &str = r#"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"#;

/// Fenced lock release: deletes the lock only when it still holds our token. `ARGV`: token.
pub(crate) const LOCK_RELEASE: &str = r#"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"#;

/// The loaded scripts of one storage.
#[derive(Debug)]
pub(crate) struct Scripts {
    pub create: redis::Script,
    pub append: redis::Script,
    pub replace: redis::Script,
    pub remove: redis::Script,
    pub read: redis::Script,
    pub lock_renew: redis::Script,
    pub lock_release: redis::Script,
}

impl Scripts {
    pub(crate) fn new() -> Self {
        let with_prelude = |body: &str| redis::Script::new(&format!("{PRELUDE}{body}"));
        Scripts {
            create: with_prelude(CREATE),
            append: with_prelude(APPEND),
            replace: with_prelude(REPLACE),
            remove: with_prelude(REMOVE),
            read: with_prelude(READ),
            lock_renew: redis::Script::new(LOCK_RENEW),
            lock_release: redis::Script::new(LOCK_RELEASE),
        }
    }
}
