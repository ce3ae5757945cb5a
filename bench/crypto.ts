/**
 * SHA-256 and HMAC-SHA256 before and after #30 (crypto from the platform), in one process:
 * an API key's hash (`hashApiKey`, on every keyed request) and a webhook signature over a
 * 1 KB body (`webhookSignature`, on every delivery attempt), each by
 *
 * - "old": the hand-written JavaScript SHA-256/HMAC the core carried until then, read from the
 *   last commit that had it (`git show`) into a scratch folder and imported from there;
 * - "node": the `#crypto` import on Node (node:crypto), which the core uses now on Node;
 * - "noble": the `#crypto` import elsewhere (@noble/hashes), timed here on Node.
 *
 * Rounds interleave the contenders and the table reports the median ns per call and the
 * ratios old/new (above 1: the new one is faster).
 *
 *   node --conditions=source --import tsx bench/crypto.ts [--rounds 7]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { hashApiKey } from '@ipokit/core/backend';
import { webhookSignature } from '../packages/core/src/events/events.js';
import * as noble from '../packages/core/src/crypto/web.js';
import { formatRows, type BenchRow } from './rows.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

interface OldKeys {
  hashApiKey(key: string): string;
}
interface OldHmac {
  hmacKey(keyBytes: Uint8Array): unknown;
  hmacSha256(key: unknown, message: Uint8Array): Uint8Array;
}

/** The hand-written implementation as the last commit before its removal had it. */
async function loadOld(): Promise<{ keys: OldKeys; hmac: OldHmac; commit: string; cleanup(): void }> {
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  const removal = git('rev-list', '-1', 'HEAD', '--', 'packages/core/src/hmac.ts');
  const commit = git('rev-parse', '--short', `${removal}^`);
  const dir = mkdtempSync(join(tmpdir(), 'ipokit-old-crypto-'));
  writeFileSync(join(dir, 'keys.ts'), git('show', `${commit}:packages/core/src/keys.ts`));
  writeFileSync(join(dir, 'hmac.ts'), git('show', `${commit}:packages/core/src/hmac.ts`));
  const keys = (await import(pathToFileURL(join(dir, 'keys.ts')).href)) as OldKeys;
  const hmac = (await import(pathToFileURL(join(dir, 'hmac.ts')).href)) as OldHmac;
  return { keys, hmac, commit, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** Median ns per call of each contender, `calls` calls a round, rounds interleaved (order reversed every other round). */
function time(contenders: Record<string, () => unknown>, calls: number, rounds: number): Record<string, number> {
  const names = Object.keys(contenders);
  const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  let sink = 0;
  for (const n of names) for (let i = 0; i < calls; i++) sink ^= String(contenders[n]!()).length; // warm-up
  for (let r = 0; r < rounds; r++) {
    for (const n of r % 2 === 0 ? names : [...names].reverse()) {
      const f = contenders[n]!;
      const t = process.hrtime.bigint();
      for (let i = 0; i < calls; i++) sink ^= String(f()).length;
      samples[n]!.push(Number(process.hrtime.bigint() - t) / calls);
    }
  }
  if (sink === -1) console.log(sink);
  return Object.fromEntries(names.map((n) => [n, median(samples[n]!)]));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/**
 * Runs both measures and returns their rows.
 *
 * @example
 * ```ts
 * console.log(formatRows(await runCryptoBench({ rounds: 7 })));
 * ```
 */
export async function runCryptoBench(options: { rounds?: number } = {}): Promise<BenchRow[]> {
  const rounds = options.rounds ?? 7;
  const old = await loadOld();
  try {
    const key = 'ipk_0123456789abcdefghijABCDEFGHIJ01';
    const hashes = time(
      { old: () => old.keys.hashApiKey(key), node: () => hashApiKey(key), noble: () => noble.sha256Hex(key) },
      200_000,
      rounds,
    );
    const secret = 'whsec_AAcOFRwjKjE4P0ZNVFtiaXB3foWMk5qh';
    const secretBytes = Uint8Array.from(atob(secret.slice(6)), (c) => c.charCodeAt(0));
    const body = JSON.stringify({ type: 'ipo.updated', timestamp: '2026-11-28T10:00:00.000Z', data: { pad: 'x'.repeat(1024 - 80) } });
    const input = { id: 'msg_2QSNRkjAoN1BJx7J1wtyd6uuLl4', timestamp: 1_790_000_000, body, secret };
    const message = `${input.id}.${input.timestamp}.${input.body}`;
    // The old webhookSignature kept the prepared key of each secret (its steady state here).
    const oldKey = old.hmac.hmacKey(secretBytes);
    const UTF8 = new TextEncoder();
    const signatures = time(
      {
        old: () => `v1,${toBase64(old.hmac.hmacSha256(oldKey, UTF8.encode(message)))}`,
        node: () => webhookSignature(input),
        noble: () => `v1,${toBase64(noble.hmacSha256(secretBytes, message))}`,
      },
      20_000,
      rounds,
    );
    const same = new Set([`v1,${toBase64(old.hmac.hmacSha256(oldKey, UTF8.encode(message)))}`, webhookSignature(input), `v1,${toBase64(noble.hmacSha256(secretBytes, message))}`]);
    if (same.size !== 1 || new Set([old.keys.hashApiKey(key), hashApiKey(key), noble.sha256Hex(key)]).size !== 1) throw new Error('the implementations disagree');
    const rows: BenchRow[] = [];
    const note = `old: the hand-written JS of ${old.commit}`;
    for (const [what, t] of [['hashApiKey (36-byte key)', hashes], [`webhook signature (${body.length}-byte body)`, signatures]] as const) {
      for (const n of ['old', 'node', 'noble'] as const) rows.push({ group: 'Crypto', name: `${what}: ${n}`, value: Math.round(t[n]!), unit: 'ns/call', ...(n === 'old' ? { note } : {}) });
      rows.push({ group: 'Crypto', name: `${what}: old / node`, value: Number((t.old! / t.node!).toFixed(2)), unit: 'x', target: '>= 1', pass: t.old! >= t.node! });
      rows.push({ group: 'Crypto', name: `${what}: old / noble`, value: Number((t.old! / t.noble!).toFixed(2)), unit: 'x' });
    }
    return rows;
  } finally {
    old.cleanup();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const at = process.argv.indexOf('--rounds');
  console.log(formatRows(await runCryptoBench(at >= 0 ? { rounds: Number(process.argv[at + 1]) } : {})));
}
