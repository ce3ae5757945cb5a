/**
 * The one Lua script the limiter runs: a whole request (every window it draws on, decided
 * and charged) in one atomic step on the Redis server, or a read-only peek, or the server's
 * clock. Not exported from the package.
 */
import { createHash } from 'node:crypto';

/**
 * KEYS: the distinct windows of one request (Redis lists of hit times as the app wrote
 * them, in insertion order: ascending unless a caller's clock went back).
 *
 * ARGV: mode (`hit`, `peek` or `time`), now, windowMs, expiry (ms), lateAfter (the
 * server time, in ms, from which a `hit` must not run; '' for none), then for each window
 * of the request in its order: the index of its key in KEYS, its quota.
 *
 * Reply of `hit` and `peek`: status ('ok', or 'late' when nothing ran), the server's TIME
 * (seconds, microseconds; '' for a peek), admitted (1/0), then for each window: count,
 * oldest, blocking (hit times as the app wrote them, or false, which Redis replies as nil).
 * Reply of `time`: the server's TIME.
 *
 * Times travel as the strings the app wrote (`String(now)`), never as Lua numbers in a
 * reply: Redis truncates those to integers. The arithmetic on them (`now - t >= windowMs`)
 * is on doubles, as in JavaScript.
 */
export const LIMITER_SCRIPT = `
local mode = ARGV[1]
if mode == 'time' then return redis.call('TIME') end
local hit = mode == 'hit'
local time = {'', ''}
if hit then
  -- A request already answered 503 (its deadline passed while this waited in a client's
  -- offline queue, in a socket, behind a slow script) must not record a hit.
  time = redis.call('TIME')
  if ARGV[5] ~= '' and tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000 >= tonumber(ARGV[5]) then
    return {'late', time[1], time[2]}
  end
end
local nowText = ARGV[2]
local now = tonumber(nowText)
local windowMs = tonumber(ARGV[3])

-- How many hits from the head have left each window: slidingWindowHit drops them from the
-- head up to the first hit still inside (a hit "from the future" stops it). Read in
-- growing chunks: almost always the first few entries decide.
local gone, size = {}, {}
for k = 1, #KEYS do
  local n = redis.call('LLEN', KEYS[k])
  local i, step = 0, 4
  while i < n do
    local part = redis.call('LRANGE', KEYS[k], i, i + step - 1)
    local j = 1
    while j <= #part and now - tonumber(part[j]) >= windowMs do j = j + 1 end
    i = i + j - 1
    if j <= #part then break end
    if step < 1024 then step = step * 2 end
  end
  gone[k], size[k] = i, n
end

local admitted = hit
for w = 6, #ARGV, 2 do
  local k = tonumber(ARGV[w])
  if size[k] - gone[k] >= tonumber(ARGV[w + 1]) then admitted = false end
end

-- The i-th hit (0-based, oldest first) of a window as describeWindow sees it: its live
-- hits, then this request's time when it is charged. Every window is described before
-- any is charged, so a key named twice sees the same hits.
local function at(k, live, i)
  if i < live then return redis.call('LINDEX', KEYS[k], gone[k] + i) end
  if admitted and i == live then return nowText end
  return false
end

local reply = {'ok', time[1], time[2], admitted and 1 or 0}
for w = 6, #ARGV, 2 do
  local k, quota = tonumber(ARGV[w]), tonumber(ARGV[w + 1])
  local live = size[k] - gone[k]
  local count = live
  if admitted then count = live + 1 end
  local oldest, blocking = false, false
  if count > 0 then
    oldest = at(k, live, 0)
    if count >= quota then blocking = at(k, live, count - quota) end
  end
  reply[#reply + 1] = count
  reply[#reply + 1] = oldest
  reply[#reply + 1] = blocking
end

if admitted then
  local expiry = tonumber(ARGV[4])
  for k = 1, #KEYS do
    -- Admitted means fewer than quota live hits: with this one the list holds at most
    -- min(quota, hits) entries. Each key once, however often the request names it.
    if gone[k] > 0 then redis.call('LTRIM', KEYS[k], gone[k], -1) end
    redis.call('RPUSH', KEYS[k], nowText)
    -- Only ever lengthened: another app may have set a longer one for a longer window.
    if redis.call('PTTL', KEYS[k]) < expiry then redis.call('PEXPIRE', KEYS[k], expiry) end
  end
end
return reply
`;

/** SHA-1 of {@link LIMITER_SCRIPT}, for EVALSHA. */
export const LIMITER_SCRIPT_SHA = createHash('sha1').update(LIMITER_SCRIPT).digest('hex');
