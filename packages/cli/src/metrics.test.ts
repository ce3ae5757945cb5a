import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServerMetrics } from './metrics.js';
import { startServer, type RunningServer } from './server.js';

const NOW = Date.UTC(2026, 10, 23, 6, 30);

/** The samples of a Prometheus text, by `name{labels sorted}`. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels = m[2] === undefined ? '' : (m[2].match(/[a-z_]+="[^"]*"/g) ?? []).sort().join(',');
    out.set(`${m[1]}{${labels}}`, Number(m[3]));
  }
  return out;
}

/** `name{a="x",b="y"}` with the labels sorted, as {@link samples} keys them. */
function key(name: string, labels: Record<string, string> = {}): string {
  return `${name}{${Object.entries(labels).map(([k, v]) => `${k}="${v}"`).sort().join(',')}}`;
}

describe('ipokit serve --metrics-port: Prometheus text on a listener of its own', () => {
  let running: RunningServer;
  beforeAll(async () => {
    running = await startServer({
      port: 0,
      now: () => new Date(NOW),
      metrics: { port: 0 },
      // a tight free plan, so that the traffic meets a 429
      router: { limits: { free: { perMinute: 2 }, paid: { perMinute: 1_000 } } },
    });
  });
  afterAll(async () => {
    await running?.close();
  });

  const scrape = async (): Promise<{ status: number; type: string | null; text: string }> => {
    const res = await fetch(running.metricsUrl!.replace('localhost', '127.0.0.1'));
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };

  it('counts the requests it answered, by route, status and plan, during and after the traffic', async () => {
    expect(running.metricsUrl).toMatch(/^http:\/\/localhost:\d+\/metrics$/);
    const api = `${running.url.replace('localhost', '127.0.0.1')}${running.mount}`;
    const get = async (path: string, key?: string): Promise<number> => (await fetch(`${api}${path}`, key === undefined ? {} : { headers: { 'x-api-key': key } })).status;
    const keys = running.keys!;
    const before = samples((await scrape()).text);
    expect(before.get(key('ipokit_http_requests_total', { route: 'list', method: 'GET', status: '200', plan: 'paid' }))).toBeUndefined();

    // The traffic, with a scrape while it runs.
    const traffic = Promise.all([
      ...Array.from({ length: 5 }, () => get('?status=listed', keys.paid)),
      get('/NOPE-NOT-AN-IPO', keys.paid),
      get('/a/b/c'),
      get('?status=listed'),
    ]);
    const during = await scrape();
    const statuses = await traffic;
    expect(statuses).toEqual([200, 200, 200, 200, 200, 404, 404, 200]);
    // (one at a time: the third is the one refused)
    const free = [await get('?status=listed', keys.free), await get('?status=listed', keys.free), await get('?status=listed', keys.free)];
    expect(free).toEqual([200, 200, 429]);

    expect(during.status).toBe(200);
    const seenDuring = samples(during.text).get(key('ipokit_http_requests_total', { route: 'list', method: 'GET', status: '200', plan: 'paid' })) ?? 0;
    expect(seenDuring).toBeLessThanOrEqual(5);

    const after = await scrape();
    expect(after.type).toMatch(/^text\/plain; version=0\.0\.4/);
    const m = samples(after.text);
    const requests = (labels: Record<string, string>) => m.get(key('ipokit_http_requests_total', labels));
    expect(requests({ route: 'list', method: 'GET', status: '200', plan: 'paid' })).toBe(5);
    expect(requests({ route: 'ipo', method: 'GET', status: '404', plan: 'paid' })).toBe(1);
    expect(requests({ route: 'unknown', method: 'GET', status: '404', plan: 'none' })).toBe(1);
    expect(requests({ route: 'list', method: 'GET', status: '200', plan: 'keyless' })).toBe(1);
    expect(requests({ route: 'list', method: 'GET', status: '200', plan: 'free' })).toBe(2);
    expect(requests({ route: 'list', method: 'GET', status: '429', plan: 'free' })).toBe(1);
    const total = [...m].filter(([k]) => k.startsWith('ipokit_http_requests_total{')).reduce((sum, [, v]) => sum + v, 0);
    expect(total).toBe(11);
    // The raw path never becomes a label.
    expect(after.text).not.toContain('NOPE-NOT-AN-IPO');
    expect(after.text).not.toContain('/a/b/c');

    expect(m.get(key('ipokit_http_request_duration_seconds_count', { route: 'list', method: 'GET', plan: 'paid' }))).toBe(5);
    // Windows: every admitted request charged the minute window; one refused by it.
    expect(m.get(key('ipokit_rate_limit_decisions_total', { window: 'minute', decision: 'admitted' }))).toBe(9);
    expect(m.get(key('ipokit_rate_limit_decisions_total', { window: 'minute', decision: 'refused' }))).toBe(1);
    // Keys: 9 keyed requests (6 paid, 3 free), each key read from the store once.
    expect(m.get(key('ipokit_key_cache_total', { result: 'miss' }))! + m.get(key('ipokit_key_cache_total', { result: 'hit' }))!).toBe(9);
    expect(m.get(key('ipokit_key_cache_total', { result: 'miss' }))).toBeGreaterThanOrEqual(2);
    // Store calls of a store in memory all succeed.
    expect(m.get(key('ipokit_store_call_duration_seconds_count', { op: 'listIpos', outcome: 'ok' }))).toBe(8);
    expect(m.get(key('ipokit_store_timeouts_total'))).toBe(0);
    expect(m.get(key('ipokit_store_shed_total'))).toBe(0);
    // The process's default metrics are there too.
    expect(m.has(key('process_cpu_user_seconds_total'))).toBe(true);
  });

  it('answers 404 beside /metrics and 405 to other methods', async () => {
    const base = running.metricsUrl!.replace('localhost', '127.0.0.1').replace(/\/metrics$/, '');
    expect((await fetch(`${base}/`)).status).toBe(404);
    expect((await fetch(`${base}/ipos`)).status).toBe(404);
    expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).toBe(405);
  });
});

describe('createServerMetrics', () => {
  it('keeps a registry of its own: two in one process do not clash', async () => {
    const a = createServerMetrics({ now: () => new Date(NOW) });
    const b = createServerMetrics({ now: () => new Date(NOW) });
    a.router.onResponse({ router: 'api', route: 'list', method: 'GET', status: 200, plan: 'pro', durationMs: 3, rateLimit: null, keyCache: null });
    expect(samples(await a.text()).get(key('ipokit_http_requests_total', { route: 'list', method: 'GET', status: '200', plan: 'pro' }))).toBe(1);
    expect(samples(await b.text()).get(key('ipokit_http_requests_total', { route: 'list', method: 'GET', status: '200', plan: 'pro' }))).toBeUndefined();
    // Without an outbox source (a store without outboxStats) its gauges are absent, not 0.
    expect(samples(await a.text()).has(key('ipokit_webhook_outbox_depth'))).toBe(false);
    expect(samples(await a.text()).has(key('ipokit_webhook_outbox_oldest_age_seconds'))).toBe(false);
  });

  it('counts webhook attempts by outcome, store timeouts and shed calls, and reads the gauges at scrape time', async () => {
    let pending = 3;
    const m = createServerMetrics({
      now: () => new Date(NOW),
      outbox: async () => ({ pending, oldestAt: NOW - 90_000 }),
      sources: () => [{ name: 'gmp-site', lastSuccessAt: new Date(NOW - 30_000).toISOString() }, { name: 'never', lastSuccessAt: null }],
    });
    m.onAttempt({ outcome: { ok: true, status: 204, body: null }, durationMs: 10 });
    m.onAttempt({ outcome: { ok: false, status: 503, error: 'answered 503', body: null }, durationMs: 10 });
    m.onAttempt({ outcome: { ok: false, status: null, error: 'timeout', body: null }, durationMs: 10 });
    m.onAttempt({ outcome: { ok: false, status: null, error: 'connection failed', body: null }, durationMs: 10 });
    m.onAttempt({ outcome: { ok: false, status: null, error: 'address not allowed', body: null }, durationMs: 10 });
    m.router.onStoreCall({ op: 'findIpo', durationMs: 100, outcome: 'timeout' });
    m.router.onStoreCall({ op: 'listIpos', durationMs: 1, outcome: 'shed' });
    let s = samples(await m.text());
    for (const outcome of ['2xx', '5xx', 'timeout', 'connection_failed', 'address_not_allowed']) {
      expect(s.get(key('ipokit_webhook_attempts_total', { outcome })), outcome).toBe(1);
    }
    expect(s.get(key('ipokit_store_timeouts_total'))).toBe(1);
    expect(s.get(key('ipokit_store_shed_total'))).toBe(1);
    expect(s.get(key('ipokit_store_call_duration_seconds_count', { op: 'findIpo', outcome: 'timeout' }))).toBe(1);
    expect(s.get(key('ipokit_webhook_outbox_depth'))).toBe(3);
    expect(s.get(key('ipokit_webhook_outbox_oldest_age_seconds'))).toBe(90);
    expect(s.get(key('ipokit_source_last_success_age_seconds', { source: 'gmp-site' }))).toBe(30);
    expect(s.has(key('ipokit_source_last_success_age_seconds', { source: 'never' }))).toBe(false);
    pending = 0;
    s = samples(await m.text());
    expect(s.get(key('ipokit_webhook_outbox_depth'))).toBe(0);
  });
});

describe('ipokit serve --metrics-port: the webhook outbox gauges', () => {
  const TOKEN = 'metrics-test-ingest-token-0123456789';
  const NOVA = { id: '2026000902', name: 'Nova Foods Ltd', symbol: 'NOVAM', slug: 'nova-foods-metrics-ipo', type: 'SME', exchanges: ['nse'], startDate: '2026-11-21', endDate: '2026-11-25' };

  it("shows a paused endpoint's backlog at scrape time: the depth, and how long the oldest has waited", async () => {
    let clock = NOW;
    const sent: string[] = [];
    const running = await startServer({
      port: 0,
      now: () => new Date(clock),
      metrics: { port: 0 },
      demoKeys: true,
      ingest: { tokens: [TOKEN] },
      webhookWorker: { pollIntervalMs: 20, transport: async (request) => (sent.push(String(request.url)), { status: 204 }) },
    });
    try {
      const base = running.url.replace('localhost', '127.0.0.1');
      const scrape = async () => samples(await (await fetch(running.metricsUrl!.replace('localhost', '127.0.0.1'))).text());
      expect((await scrape()).get(key('ipokit_webhook_outbox_depth'))).toBe(0);
      expect((await scrape()).get(key('ipokit_webhook_outbox_oldest_age_seconds'))).toBe(0);

      // The demo pro account's endpoint, paused: its deliveries stay owed.
      const cookie = (await fetch(`${base}/demo/sign-in`, { redirect: 'manual' })).headers.get('set-cookie')!.split(';')[0]!;
      const account = async (path: string, body: unknown) => {
        const res = await fetch(`${base}/account${path}`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        expect(res.status, await res.clone().text()).toBeLessThan(300);
        return (await res.json()) as { webhook: { id: string } };
      };
      const { webhook } = await account('/webhooks', { url: 'https://example.com/hooks/metrics', events: ['ipo.created'] });
      await account(`/webhooks/${webhook.id}/pause`, {});

      // A pushed IPO: one ipo.created owed to it, at the write's instant.
      const pushed = await fetch(`${base}/-/ingest`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }, body: JSON.stringify({ ipos: [NOVA] }) });
      expect(pushed.status, await pushed.clone().text()).toBe(200);
      clock = NOW + 90_000;
      let s = await scrape();
      expect(s.get(key('ipokit_webhook_outbox_depth'))).toBe(1);
      expect(s.get(key('ipokit_webhook_outbox_oldest_age_seconds'))).toBe(90);
      clock = NOW + 150_000;
      s = await scrape();
      expect(s.get(key('ipokit_webhook_outbox_depth'))).toBe(1);
      expect(s.get(key('ipokit_webhook_outbox_oldest_age_seconds'))).toBe(150);
      expect(sent).toEqual([]);
    } finally {
      await running.close();
    }
  });
});
