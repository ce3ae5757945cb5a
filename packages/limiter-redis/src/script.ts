/**
 * The one Lua script the limiter runs: a whole request (every window it draws on, decided
 * and charged, and its usage counted) in one atomic step on the Redis server, or a
 * read-only peek, or a read of usage, or the server's clock. Not exported from the package.
 */
import { createHash } from 'node:crypto';

/**
 * KEYS: the distinct windows of one request, then (for a `hit` with usage) the usage hash of
 * the account's day. A sliding window is a Redis list of hit times as the app wrote them,
 * in insertion order (ascending unless a caller's clock went back); a calendar window is a
 * string holding its count. For `usage`: the usage hashes to read.
 *
 * ARGV: mode (`hit`, `peek`, `usage` or `time`), now, lateAfter (the server time, in ms,
 * from which a `hit` must not run; '' for none), n (how many of KEYS are windows: a
 * further key is the usage hash), the usage field's beginning (`<keyId>:<route>:`), the
 * usage hash's expiry (s); then for each window key in KEYS order: its length (ms), its
 * start ('' for a sliding window), its expiry (ms); then for each window of the request in
 * its order: the index of its key in KEYS, its quota.
 *
 * Reply of `hit` and `peek`: status ('ok', or 'late' when nothing ran), the server's TIME
 * (seconds, microseconds; '' for a peek), admitted (1/0), then for each window: count,
 * oldest, blocking (times as the app wrote them, or false, which Redis replies as nil).
 * Reply of `usage`: for each key, its fields and values (HGETALL). Reply of `time`: the
 * server's TIME.
 *
 * Times travel as the strings the app wrote (`String(now)`), never as Lua numbers in a
 * reply: Redis truncates those to integers. The arithmetic on them (`now - t >= ms`) is on
 * doubles, as in JavaScript.
 */
export const LIMITER_SCRIPT = `
local mode = ARGV[1]
if mode == 'time' then return redis.call('TIME') end
if mode == 'usage' then
  local reply = {}
  for k = 1, #KEYS do reply[k] = redis.call('HGETALL', KEYS[k]) end
  return reply
end
local hit = mode == 'hit'
local time = {'', ''}
if hit then
  -- A request already answered 503 (its deadline passed while this waited in a client's
  -- offline queue, in a socket, behind a slow script) must not record anything.
  time = redis.call('TIME')
  if ARGV[3] ~= '' and tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000 >= tonumber(ARGV[3]) then
    return {'late', time[1], time[2]}
  end
end
local nowText = ARGV[2]
local now = tonumber(nowText)
local n = tonumber(ARGV[4])
local first = 7 + 3 * n

-- Each window key: a calendar window's count, or how many hits from a sliding window's
-- head have left it (rateLimitHit drops them from the head up to the first hit still
-- inside; a hit "from the future" stops it). Read in growing chunks: almost always the
-- first few entries decide, so the cost does not grow with the quota.
local calendar, gone, size = {}, {}, {}
for k = 1, n do
  local base = 4 + 3 * k
  if ARGV[base + 1] ~= '' then
    calendar[k] = ARGV[base + 1]
    gone[k], size[k] = 0, tonumber(redis.call('GET', KEYS[k]) or '0')
  else
    local ms = tonumber(ARGV[base])
    local len = redis.call('LLEN', KEYS[k])
    local i, step = 0, 4
    while i < len do
      local part = redis.call('LRANGE', KEYS[k], i, i + step - 1)
      local j = 1
      while j <= #part and now - tonumber(part[j]) >= ms do j = j + 1 end
      i = i + j - 1
      if j <= #part then break end
      if step < 1024 then step = step * 2 end
    end
    gone[k], size[k] = i, len
  end
end

local admitted = hit
for w = first, #ARGV, 2 do
  local k = tonumber(ARGV[w])
  if size[k] - gone[k] >= tonumber(ARGV[w + 1]) then admitted = false end
end

-- The i-th hit (0-based, oldest first) of a sliding window as describeWindow sees it: its
-- live hits, then this request's time when it is charged. Every window is described
-- before any is charged, so a key named twice sees the same hits.
local function at(k, live, i)
  if i < live then return redis.call('LINDEX', KEYS[k], gone[k] + i) end
  if admitted and i == live then return nowText end
  return false
end

local reply = {'ok', time[1], time[2], admitted and 1 or 0}
for w = first, #ARGV, 2 do
  local k, quota = tonumber(ARGV[w]), tonumber(ARGV[w + 1])
  local live = size[k] - gone[k]
  local count = live
  if admitted then count = live + 1 end
  local oldest, blocking = false, false
  if count > 0 then
    if calendar[k] then
      -- A calendar window frees its places at start + ms, all at once.
      oldest = calendar[k]
      if count >= quota then blocking = calendar[k] end
    else
      oldest = at(k, live, 0)
      if count >= quota then blocking = at(k, live, count - quota) end
    end
  end
  reply[#reply + 1] = count
  reply[#reply + 1] = oldest
  reply[#reply + 1] = blocking
end

if admitted then
  for k = 1, n do
    local expiry = ARGV[6 + 3 * k]
    if calendar[k] then
      redis.call('INCR', KEYS[k])
      -- Only ever lengthened: a caller whose clock is ahead computes a shorter one.
      if redis.call('PTTL', KEYS[k]) < tonumber(expiry) then redis.call('PEXPIRE', KEYS[k], expiry) end
    else
      -- Admitted means fewer than quota live hits: with this one the list holds at most
      -- min(quota, hits) entries. Each key once, however often the request names it.
      if gone[k] > 0 then redis.call('LTRIM', KEYS[k], gone[k], -1) end
      redis.call('RPUSH', KEYS[k], nowText)
      redis.call('PEXPIRE', KEYS[k], expiry)
    end
  end
end

if hit and #KEYS > n then
  local usage = KEYS[n + 1]
  redis.call('HINCRBY', usage, ARGV[5] .. (admitted and 'a' or 'r'), 1)
  redis.call('EXPIRE', usage, ARGV[6])
end
return reply
`;

/** SHA-1 of {@link LIMITER_SCRIPT}, for EVALSHA. */
export const LIMITER_SCRIPT_SHA = createHash('sha1').update(LIMITER_SCRIPT).digest('hex');
