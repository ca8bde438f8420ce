/**
 * Presence across machines, in Redis: one sorted set per room,
 * `${prefix}:online:${room}`, member = client id, score = when it last polled
 * (ms since the epoch). A room's count is `ZCOUNT` over the window; members
 * older than the window are trimmed as we go, and the key expires once nobody
 * has polled the room for a whole window.
 *
 * Each batch of a process's touches and leaves, and the counts it asks for,
 * is one pipelined round trip (see `SharedPresence` for the batching and the
 * ~1 s cache that keeps `count()` synchronous).
 *
 * The nicknames are in a hash per room, `${prefix}:names:${room}` (client →
 * nickname), with the same expiry. The room's list is read with its count,
 * in one script that looks up the nicknames of the clients within the
 * window and returns the first `limits.maxPeopleListed` in sort order: the
 * list never carries more than that across the network, whatever the room's
 * size. (The script reads every member of the window: O(n) in Redis, once
 * per room per cache period and process. A client that stops polling leaves
 * its hash field behind until the hash expires with the room, so the hash
 * is as large as the room's distinct clients within one idle window.)
 *
 * While Redis does not answer (`health` says down) a sync fails at once, and
 * one that gets no answer within the deadline fails then: the count falls
 * back to this process's clients (`SharedPresence`), and no sync waits on a
 * silent Redis, nor do syncs pile up behind one.
 *
 * The scores come from each server's clock: servers whose clocks differ by
 * seconds count a client a few seconds longer or shorter, which the grace
 * period absorbs.
 */
import type { Redis } from 'ioredis';
import { DEFAULT_NICKNAME, limits } from '../../protocol/protocol.ts';
import { type RedisHealth, RedisTimeoutError, withDeadline } from '../bus/redis-health.ts';
import type { Log } from '../core/log.ts';
import { type PresenceBatch, SharedPresence, type SharedRoom } from './shared-presence.ts';

/**
 * KEYS: the room's sorted set and its names hash; ARGV: the window's start,
 * the default nickname, how many to return. The first nicknames in byte
 * order (each process sorts them again, people.ts). HMGET in chunks: Lua's
 * `unpack` takes a few thousand values at most.
 */
const LIST_SCRIPT = `
local clients = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], '+inf')
local entries = {}
for i = 1, #clients, 1000 do
  local chunk = {}
  for j = i, math.min(i + 999, #clients) do chunk[#chunk + 1] = clients[j] end
  local got = redis.call('HMGET', KEYS[2], unpack(chunk))
  local from = redis.call('HMGET', KEYS[3], unpack(chunk))
  for j = 1, #got do entries[#entries + 1] = { got[j] or ARGV[2], from[j] } end
end
table.sort(entries, function(a, b) return a[1] < b[1] end)
local max = tonumber(ARGV[3])
local per = tonumber(ARGV[4])
local shown = {}
local first = {}
for i = 1, #entries do
  if #first >= max then break end
  local name, address = entries[i][1], entries[i][2]
  local listed = true
  if per > 0 and address then
    local count = shown[address] or 0
    if count >= per then listed = false else shown[address] = count + 1 end
  end
  if listed then first[#first + 1] = name end
end
return first
`;

/**
 * A touch whose client address is known. KEYS: the room's sorted set, its
 * names hash, its addresses hash, the address's sorted set of client ids
 * (every room); ARGV: now, the window's start, client, nickname, address,
 * the per-address cap (0: none), the window. A client new to the address
 * when the address already has the cap counted is not counted (0): the
 * cap holds across every process on this Redis.
 */
const TOUCH_SCRIPT = `
local cap = tonumber(ARGV[6])
if cap > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', '(' .. ARGV[2])
  if not redis.call('ZSCORE', KEYS[4], ARGV[3]) and redis.call('ZCARD', KEYS[4]) >= cap then
    return 0
  end
  redis.call('ZADD', KEYS[4], ARGV[1], ARGV[3])
  redis.call('PEXPIRE', KEYS[4], ARGV[7])
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[7])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[7])
redis.call('HSET', KEYS[3], ARGV[3], ARGV[5])
redis.call('PEXPIRE', KEYS[3], ARGV[7])
return 1
`;

export interface RedisPresenceOptions {
  /** `REDIS_PREFIX`: keys are `${prefix}:online:${room}`. */
  prefix: string;
  windowMs: number;
  cacheMs?: number;
  /** `PRESENCE_STALE_MS`: see `SharedPresenceOptions.staleMs`. */
  staleMs?: number;
  /** `PRESENCE_CLIENTS_PER_ADDRESS`, across every process on this Redis (0: none). @default 0 */
  clientsPerAddress?: number;
  /** `PEOPLE_LISTED_PER_ADDRESS` (0: none). @default 0 */
  namesPerAddress?: number;
  /** Whether Redis answers, and its deadline (`REDIS_TIMEOUT_MS`). */
  health?: RedisHealth;
  log?: Log;
}

/** `redis` is a normal (not subscriber) connection; the bus's publisher does. */
export function createRedisPresence(redis: Redis, options: RedisPresenceOptions): SharedPresence {
  const key = (room: string) => `${options.prefix}:online:${room}`;
  const namesKey = (room: string) => `${options.prefix}:names:${room}`;
  const addressesKey = (room: string) => `${options.prefix}:addresses:${room}`;
  const byAddressKey = (address: string) => `${options.prefix}:by-address:${address}`;
  const clientsPerAddress = options.clientsPerAddress ?? 0;
  const namesPerAddress = options.namesPerAddress ?? 0;

  const { health } = options;

  async function sync(batch: PresenceBatch): Promise<Map<string, SharedRoom>> {
    if (health && !health.up) throw new RedisTimeoutError('redis presence: Redis does not answer');
    const now = Date.now();
    const oldest = now - options.windowMs;
    const pipeline = redis.pipeline();
    const touched = new Map<string, { members: Array<number | string>; names: string[] }>();
    for (const [index, [room, client, nickname]] of batch.touches.entries()) {
      const address = batch.addresses?.[index];
      if (address) {
        pipeline.eval(
          TOUCH_SCRIPT,
          4,
          key(room),
          namesKey(room),
          addressesKey(room),
          byAddressKey(address),
          now,
          oldest,
          client,
          nickname ?? DEFAULT_NICKNAME,
          address,
          clientsPerAddress,
          options.windowMs,
        );
        continue;
      }
      let entry = touched.get(room);
      if (!entry) {
        entry = { members: [], names: [] };
        touched.set(room, entry);
      }
      entry.members.push(now, client);
      entry.names.push(client, nickname ?? DEFAULT_NICKNAME);
    }
    for (const [room, { members, names }] of touched) {
      pipeline.zadd(key(room), ...members);
      pipeline.pexpire(key(room), options.windowMs);
      pipeline.hset(namesKey(room), ...names);
      pipeline.pexpire(namesKey(room), options.windowMs);
    }
    for (const [room, client] of batch.leaves) {
      pipeline.zrem(key(room), client);
      pipeline.hdel(namesKey(room), client);
      pipeline.hdel(addressesKey(room), client);
    }
    for (const room of batch.rooms) {
      pipeline.zremrangebyscore(key(room), '-inf', `(${oldest}`);
      pipeline.zcount(key(room), oldest, '+inf');
      pipeline.eval(
        LIST_SCRIPT,
        3,
        key(room),
        namesKey(room),
        addressesKey(room),
        oldest,
        DEFAULT_NICKNAME,
        limits.maxPeopleListed,
        namesPerAddress,
      );
    }
    const exec = pipeline.exec();
    let results: Awaited<typeof exec>;
    try {
      results = health ? await withDeadline(exec, health.timeoutMs, 'redis presence') : await exec;
    } catch (error) {
      if (error instanceof RedisTimeoutError) health?.silent();
      throw error;
    }
    results ??= [];
    for (const [error] of results) if (error) throw error;
    // Each room's count and list are the last two results of its three, in `batch.rooms` order.
    const rooms = results.slice(results.length - batch.rooms.length * 3);
    return new Map(
      batch.rooms.map((room, i): [string, SharedRoom] => {
        const names = rooms[3 * i + 2]?.[1];
        return [
          room,
          {
            count: Number(rooms[3 * i + 1]?.[1] ?? 0),
            names: Array.isArray(names) ? names.map(String) : [],
          },
        ];
      }),
    );
  }

  return new SharedPresence(sync, {
    windowMs: options.windowMs,
    cacheMs: options.cacheMs,
    staleMs: options.staleMs,
    log: options.log,
    name: 'redis presence',
  });
}
