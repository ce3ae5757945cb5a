/**
 * @ipokit/limiter-redis: the exact rate limiter of ipokit on Redis (sliding and IST-day
 * windows, and the usage counted with them), for
 * `ipoRouter(store, { limiter: redisLimiter({ client }) })`.
 */
export { redisLimiter, type RedisLimiter, type RedisLimiterOptions } from './redis-limiter.js';
export type { IoredisClient, NodeRedisClient } from './clients.js';
