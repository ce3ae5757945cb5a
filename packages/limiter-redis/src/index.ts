/**
 * @ipokit/limiter-redis: the exact sliding-window rate limiter of ipokit on Redis, for
 * `ipoRouter(store, { limiter: redisLimiter({ client }) })`.
 */
export { redisLimiter, type RedisLimiter, type RedisLimiterOptions } from './redis-limiter.js';
export type { IoredisClient, NodeRedisClient } from './clients.js';
