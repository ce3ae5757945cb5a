/**
 * The reference rate limiter of the conformance suites: the spec's rule run on plain lists.
 */
import { rateLimitHit, type RateLimitOutcome, rateLimitPeek, type RateLimitWindow, type RateLimitWindowState, type UsageCharge } from '@ipokit/core/backend';
import type { UsageRow } from '@ipokit/core';

/**
 * The rate limiter as the spec defines it: per-window hit lists run through the core's
 * `rateLimitHit` and `rateLimitPeek`, a window being its key, length and period, and usage
 * counted per account, day, key and route. What `testLimiter` compares a limiter with; for
 * a backend's own properties beyond the suite's.
 *
 * @example
 * ```ts
 * const model = rateLimitModel();
 * expect(await limiter.hitRateLimit({ now, windows })).toEqual(model.hit({ now, windows }));
 * ```
 */
export function rateLimitModel(): {
  hit(input: { now: number; windows: RateLimitWindow[]; usage?: UsageCharge }): RateLimitOutcome;
  peek(input: { now: number; windows: RateLimitWindow[] }): RateLimitWindowState[];
  readUsage(query: { accountId: string; from: string; to: string; keyId?: string }): UsageRow[];
} {
  const hits = new Map<string, number[]>();
  const usage = new Map<string, UsageRow & { accountId: string }>();
  const id = (w: RateLimitWindow): string => `${w.key}\u0000${w.ms}\u0000${w.start ?? ''}`;
  const withHits = (windows: RateLimitWindow[]) => windows.map((w) => ({ quota: w.quota, ms: w.ms, ...(w.start === undefined ? {} : { start: w.start }), hits: hits.get(id(w)) ?? [] }));
  return {
    peek({ now, windows }) {
      return rateLimitPeek({ now, windows: withHits(windows) });
    },
    hit({ now, windows, usage: charge }) {
      const result = rateLimitHit({ now, windows: withHits(windows) });
      // A window named twice is charged once: each of its lists is "before + now".
      if (result.admitted) windows.forEach((w, i) => hits.set(id(w), result.hits[i] ?? []));
      if (charge !== undefined) {
        const k = `${charge.accountId}\u0000${charge.day}\u0000${charge.keyId}\u0000${charge.route}`;
        const row = usage.get(k) ?? { accountId: charge.accountId, day: charge.day, keyId: charge.keyId, route: charge.route, admitted: 0, refused: 0 };
        if (result.admitted) row.admitted++;
        else row.refused++;
        usage.set(k, row);
      }
      return { admitted: result.admitted, windows: result.windows };
    },
    readUsage({ accountId, from, to, keyId }) {
      const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
      return [...usage.values()]
        .filter((r) => r.accountId === accountId && r.day >= from && r.day <= to && (keyId === undefined || r.keyId === keyId))
        .sort((a, b) => cmp(a.day, b.day) || cmp(a.keyId, b.keyId) || cmp(a.route, b.route))
        .map(({ day, keyId: k, route, admitted, refused }) => ({ day, keyId: k, route, admitted, refused }));
    },
  };
}
