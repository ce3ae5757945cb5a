/**
 * The webhooks-abuse phase of `npm run faults` (issue #29, docs/spec.md#webhooks "Bounds" and
 * "Fairness"): one account does what it can to the worker and the store, and another
 * account's deliveries must stay on time while memory and descriptors stay bounded.
 *
 * The attacker is a pro account with the most endpoints it may have (one more must be
 * refused): some hang (they read the request and never answer), some are slow (they send a
 * status and then a byte a second, never ending the body), some fail (500). It imports one IPO
 * with 2,000 snapshots, so it is owed 20,000+ deliveries. The victim has one endpoint that
 * answers at once; this script then imports a new IPO every second (a probe) and times the
 * victim's `ipo.created` from the import to its arrival. The worker runs in this process, as
 * `ipokit serve` runs it, with its defaults (concurrency 64, the platform's transport).
 *
 * It fails when a probe does not arrive, one arrives later than about one attempt's timeout,
 * the heap grows by more than 512 MB, more than 512 descriptors are open, or an endpoint past
 * the cap is accepted; and reports the figures.
 */
import { readdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createAccount, createWebhook, importDataset, isIpokitError, type Store, type WebhookStore } from '@ipokit/core';
import { startWebhookWorker } from '@ipokit/webhooks';

/** How many probes (one a second). */
const PROBES = 20;
/** Snapshots of the attacker's import. */
const SNAPSHOTS = 2_000;
/** The latest a probe may arrive: about one attempt's 15 s timeout. */
const LATE_MS = 16_000;
const LOOPBACK = ['127.0.0.0/8', '::1/128'];

/** A backend to run the phase on. */
export interface AbuseTarget {
  name: string;
  store: Store & WebhookStore;
  close(): Promise<void>;
}

/**
 * Runs the phase on one backend; resolves to its problems and report lines.
 *
 * @example
 * ```ts
 * const { problems, lines } = await webhookAbuse({ name: 'memory', store: memoryStore(), close: async () => {} });
 * ```
 */
export async function webhookAbuse(target: AbuseTarget): Promise<{ problems: string[]; lines: string[] }> {
  const problems: string[] = [];
  const { store } = target;
  const servers: http.Server[] = [];
  const sockets = new Set<Socket>();
  const serve = async (handler: http.RequestListener): Promise<string> => {
    const server = http.createServer(handler);
    server.on('connection', (s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  const attempts = { hanging: 0, slow: 0, failing: 0 };
  const hanging = await serve((req) => {
    attempts.hanging++;
    req.resume(); // read it, answer never
  });
  const trickles = new Set<NodeJS.Timeout>();
  const slow = await serve((req, res) => {
    attempts.slow++;
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain' });
    const t = setInterval(() => res.write('.'), 1_000);
    trickles.add(t);
    res.on('close', () => {
      clearInterval(t);
      trickles.delete(t);
    });
  });
  const failing = await serve((req, res) => {
    attempts.failing++;
    req.resume();
    res.writeHead(500).end('no');
  });
  const arrived = new Map<string, number>();
  const victim = await serve((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; data: { id: string } };
      if (body.type === 'ipo.created' && !arrived.has(body.data.id)) arrived.set(body.data.id, performance.now());
      res.writeHead(204).end();
    });
  });

  const attacker = await createAccount(store, { name: 'Attacker', plan: 'pro', gmpAddon: true });
  const kinds = ['hang', 'hang', 'hang', 'hang', 'slow', 'slow', 'slow', 'fail', 'fail', 'fail'];
  const base = { hang: hanging, slow, fail: failing } as const;
  for (const [i, kind] of kinds.entries()) {
    await createWebhook(store, { accountId: attacker.id, url: `${base[kind as keyof typeof base]}/hooks/${i}`, events: ['ipo.created', 'gmp.snapshot'] }, { webhookAllowedNetworks: LOOPBACK });
  }
  const eleventh = await createWebhook(store, { accountId: attacker.id, url: `${failing}/hooks/11`, events: ['gmp.snapshot'] }, { webhookAllowedNetworks: LOOPBACK }).then(
    () => 'accepted',
    (err: unknown) => (isIpokitError(err) ? err.code : String(err)),
  );
  if (eleventh !== 'ERR:PLAN') problems.push(`${target.name}: an 11th endpoint was ${eleventh}, not refused with ERR:PLAN`);
  const owner = await createAccount(store, { name: 'Victim', plan: 'pro', gmpAddon: true });
  const victimHook = await createWebhook(store, { accountId: owner.id, url: `${victim}/hooks/victim`, events: ['ipo.created'] }, { webhookAllowedNetworks: LOOPBACK });

  const heapBefore = process.memoryUsage().heapUsed;
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const worker = startWebhookWorker(store, { allowInsecureWebhooks: true, webhookAllowedNetworks: LOOPBACK, onError: (err) => problems.push(`${target.name}: worker: ${String(err)}`) });
  let mostFds = 0;
  const fdWatch = setInterval(() => (mostFds = Math.max(mostFds, openDescriptors())), 250);
  const lines: string[] = [];
  try {
    const at = Date.now();
    const started = performance.now();
    await importDataset(store, {
      ipos: [{ id: 'abuse', name: 'Abuse Ltd', slug: 'abuse-ltd', type: 'SME' }],
      gmp: Array.from({ length: SNAPSHOTS }, (_, i) => ({ ipoId: 'abuse', timestamp: new Date(at - (SNAPSHOTS - i) * 60_000).toISOString(), sources: [{ name: 'a', gmpPrice: 10 + (i % 40) }] })),
    });
    const importMs = performance.now() - started;
    const sent = new Map<string, number>();
    for (let i = 0; i < PROBES; i++) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const id = `probe${i}`;
      sent.set(id, performance.now());
      await importDataset(store, { ipos: [{ id, name: `Probe ${i}`, slug: `probe-${i}`, type: 'EQ' }] });
    }
    const until = performance.now() + LATE_MS + 2_000;
    while ([...sent.keys()].some((id) => !arrived.has(id)) && performance.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
    const late = [...sent].map(([id, t]) => (arrived.has(id) ? arrived.get(id)! - t : Infinity)).sort((a, b) => a - b);
    const missing = late.filter((l) => l === Infinity).length;
    const grewMb = (process.memoryUsage().heapUsed - heapBefore) / 1e6;
    if (missing > 0) {
      problems.push(`${target.name}: ${missing} of ${PROBES} probes never reached the other account`);
      if (process.env.DEBUG_ABUSE) console.log(JSON.stringify(await store.listDeliveries({ webhookId: victimHook.id, before: null, limit: 100 }), null, 1), [...arrived.keys()]);
    }
    if (late.some((l) => l !== Infinity && l > LATE_MS)) problems.push(`${target.name}: a probe arrived ${Math.round(late[late.length - 1]!)} ms late (more than ${LATE_MS} ms)`);
    if (grewMb > 512) problems.push(`${target.name}: the heap grew by ${grewMb.toFixed(0)} MB`);
    if (mostFds > 512) problems.push(`${target.name}: ${mostFds} descriptors open at once`);
    const ms = (x: number): string => (x === Infinity ? 'never' : `${Math.round(x)} ms`);
    lines.push(
      `webhook abuse (${target.name}): 10 endpoints (4 hanging, 3 slow, 3 failing), an 11th ${eleventh === 'ERR:PLAN' ? 'refused' : eleventh}; ` +
        `a ${SNAPSHOTS}-snapshot import in ${Math.round(importMs)} ms (event loop blocked at most ${Math.round(loop.max / 1e6)} ms); ` +
        `${PROBES - missing}/${PROBES} probes on time, ${ms(late[late.length >> 1]!)} median, ${ms(late[late.length - 1]!)} max; ` +
        `heap +${Math.max(0, grewMb).toFixed(0)} MB, at most ${mostFds} descriptors; attempts hanging ${attempts.hanging}, slow ${attempts.slow}, failing ${attempts.failing}`,
    );
  } finally {
    clearInterval(fdWatch);
    loop.disable();
    for (const t of trickles) clearInterval(t);
    for (const s of sockets) s.destroy();
    await worker.stop();
    for (const s of servers) await new Promise((resolve) => s.close(resolve));
    await target.close();
  }
  return { problems, lines };
}

/** Descriptors this process has open (Linux; 0 elsewhere). */
function openDescriptors(): number {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return 0;
  }
}
