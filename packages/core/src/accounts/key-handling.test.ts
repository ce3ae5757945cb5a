import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createIpoHandler, type HandlerRequest } from '../http/handler.js';
import { revokeApiKey, updateAccount } from './admin.js';
import { hashApiKey } from './keys.js';
import { FIXTURE_NOW, seedFixture } from '@ipokit/testing';
import { referenceStore } from '@ipokit/testing';
import type { Store } from '../model/types.js';

// Keys (issue: "stored only as hashes, never echoed or logged, comparison leaks no timing
// that reveals a valid key prefix"). The handler hashes the whole sent key (SHA-256) and
// asks the store for that hash only: no store, cache or log ever holds or compares key
// text, so a key that shares a long prefix with a valid one is, to every comparison made,
// as unrelated as a random one. Checked here by recording every argument the store and
// onError receive, and every byte answered, for keys near a valid one.

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function recording(store: Store): { store: Store; seen: string[] } {
  const seen: string[] = [];
  const wrapped = new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        seen.push(`${String(name)} ${JSON.stringify(args)}`);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: wrapped, seen };
}

function request(key: string, path = '/ORBIT'): HandlerRequest {
  return { method: 'GET', url: `/ipos${path}`, path, query: '', headers: { 'x-api-key': key }, clientAddress: '203.0.113.9' };
}

describe('API keys in the handler', () => {
  it('only the SHA-256 of a sent key reaches the store; no key text reaches the store, onError or the answer', async () => {
    const base = referenceStore();
    const { keys } = await seedFixture(base);
    const valid = keys.paid;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: valid.length }),
        fc.stringMatching(/^[A-Za-z0-9]{0,40}$/),
        async (shared, tail) => {
          const { store, seen } = recording(base);
          const logged: string[] = [];
          const handle = createIpoHandler(store, {
            now: () => new Date(FIXTURE_NOW),
            keyCacheTtlMs: 0,
            limits: { paid: { perMinute: Infinity }, keyless: { perMinute: Infinity } },
            onError: (err) => void logged.push(String(err)),
          });
          // A key sharing `shared` leading characters with a valid key.
          const sent = valid.slice(0, shared) + tail;
          const res = await handle(request(sent));
          const secret = valid.slice(4); // the random part of the valid key
          for (const line of [...seen, ...logged, res.body, JSON.stringify(res.headers)]) {
            // (a sent key of a few characters can occur in any text by chance)
            expect(sent.length >= 8 && line.includes(sent) ? line : '').toBe('');
            expect(line.includes(secret) ? line : '').toBe('');
          }
          const lookups = seen.filter((l) => l.startsWith('findApiKey '));
          // An empty header is no key (docs/spec.md#requests): nothing to look up.
          // (the second argument is the call's deadline, a number)
          const hashes = lookups.map((l) => (JSON.parse(l.slice('findApiKey '.length)) as unknown[])[0]);
          expect(hashes).toEqual(sent === '' ? [] : [hashApiKey(sent)]);
          expect(res.status).toBe(sent === valid ? 200 : 401);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('hashes of keys that share a prefix share no more of the hash than unrelated keys do', () => {
    // What the store compares is the hash: its leading characters reveal nothing about
    // how much of the key was right (the first hex digit matches 1 time in 16 either way).
    const valid = `ipk_${'A'.repeat(32)}`;
    let near = 0;
    const n = 4096;
    for (let i = 0; i < n; i++) {
      const k = `${valid.slice(0, 35)}${BASE62[i % 62]}${i}`;
      if (hashApiKey(k)[0] === hashApiKey(valid)[0]) near++;
    }
    expect(near / n).toBeLessThan(0.1);
  });

  it('a key lookup in flight while the key is revoked (or its plan changed) does not put the old grant back in the cache', async () => {
    const base = referenceStore();
    const { keys, keyIds, accounts } = await seedFixture(base);
    // findApiKey answers only when the test lets it, as a slow database would
    let hold: Promise<void> | null = null;
    const store = new Proxy(base, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (name !== 'findApiKey' || typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          const rows = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          if (hold !== null) await hold;
          return rows;
        };
      },
    });
    const handle = createIpoHandler(store, {
      now: () => new Date(FIXTURE_NOW),
      keyCacheTtlMs: 60_000,
      limits: { paid: { perMinute: Infinity }, pro: { perMinute: Infinity } },
    });
    let release!: () => void;

    // revocation
    hold = new Promise((resolve) => (release = resolve));
    const inFlight = handle(request(keys.paid));
    await new Promise((resolve) => setTimeout(resolve, 10)); // the lookup has read the key
    await revokeApiKey(store, keyIds.paid, { now: () => new Date(FIXTURE_NOW) });
    hold = null;
    release();
    await inFlight; // began before the revocation: either answer is right for it
    expect((await handle(request(keys.paid))).status).toBe(401);

    // plan change: the pro account loses the GMP add-on while a lookup of its key is in flight
    const withGmp = { ...request(keys.proGmp), query: 'includeGmp=true' };
    hold = new Promise((resolve) => (release = resolve));
    const before = handle(withGmp);
    await new Promise((resolve) => setTimeout(resolve, 10));
    await updateAccount(store, { accountId: accounts.proGmp, gmpAddon: false });
    hold = null;
    release();
    await before;
    expect((await handle(withGmp)).status).toBe(403);
  });
});
