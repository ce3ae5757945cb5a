import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { deliverWebhook, fetchTransport, type WebhookTransport } from './delivery.js';
import { nodeWebhookTransport } from './node.js';
import { generateWebhookSecret } from './events.js';

// One delivery attempt against real local receivers (node:http on 127.0.0.1).

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
  method: string;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function receiver(answer: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      received.push({ headers: req.headers, body, method: req.method ?? '' });
      answer(req, res, body);
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}

const message = () => ({
  secret: generateWebhookSecret(),
  id: 'msg_2Y8pQ',
  timestamp: Math.floor(Date.now() / 1000),
  body: JSON.stringify({ type: 'ipo.status_changed', timestamp: new Date().toISOString(), data: { id: '2026000001', from: 'upcoming', to: 'open', note: 'Zürich \u{1F600}' } }),
});

// Every check runs on both transports: fetch (every runtime) and Node's own (@ipokit/core/node).
const node = nodeWebhookTransport();
afterAll(() => node.close());
describe.each([
  ['fetchTransport', fetchTransport()],
  ['nodeWebhookTransport', node],
] as Array<[string, WebhookTransport]>)('deliverWebhook on %s', (_name, transport) => {
  it('POSTs the body as sent with the Standard Webhooks headers, which the standardwebhooks package verifies; a 2xx is delivered', async () => {
    for (const status of [200, 201, 204, 299]) {
      const r = await receiver((_req, res) => res.writeHead(status).end());
      const m = message();
      expect(await deliverWebhook({ ...m, url: r.url, allowInsecure: true, transport })).toEqual({ ok: true, status });
      const [got] = r.received;
      expect(got!.method).toBe('POST');
      expect(got!.body).toBe(m.body);
      expect(got!.headers['content-type']).toBe('application/json');
      expect(got!.headers['webhook-id']).toBe(m.id);
      expect(got!.headers['webhook-timestamp']).toBe(String(m.timestamp));
      const verified = new Webhook(m.secret).verify(got!.body, {
        'webhook-id': String(got!.headers['webhook-id']),
        'webhook-timestamp': String(got!.headers['webhook-timestamp']),
        'webhook-signature': String(got!.headers['webhook-signature']),
      });
      expect(verified).toEqual(JSON.parse(m.body));
    }
  });

  it('counts any other answer as failed, with its status', async () => {
    for (const status of [400, 404, 410, 429, 500, 503]) {
      const r = await receiver((_req, res) => res.writeHead(status).end('no'));
      expect(await deliverWebhook({ ...message(), url: r.url, allowInsecure: true, transport })).toEqual({ ok: false, status, error: `answered ${status}` });
    }
  });

  it('does not follow a redirect: the target receives nothing and the attempt fails', async () => {
    const target = await receiver((_req, res) => res.writeHead(200).end());
    for (const status of [301, 302, 307, 308]) {
      const r = await receiver((_req, res) => res.writeHead(status, { location: target.url }).end());
      const outcome = await deliverWebhook({ ...message(), url: r.url, allowInsecure: true, transport });
      expect(outcome).toEqual({ ok: false, status, error: `answered ${status}: redirects are not followed` });
    }
    expect(target.received).toEqual([]);
  });

  it('gives up on an endpoint that does not answer within the timeout', async () => {
    const r = await receiver(() => undefined); // reads the request, never answers
    const started = performance.now();
    const outcome = await deliverWebhook({ ...message(), url: r.url, allowInsecure: true, transport, timeoutMs: 300 });
    expect(outcome).toEqual({ ok: false, status: null, error: 'no answer within 300 ms' });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(r.received).toHaveLength(1);
  });

  it('fails on a refused connection, and sends nothing to http: unless insecure URLs are allowed', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end());
    const closed = r.url;
    const s = servers.pop()!;
    s.closeAllConnections();
    await new Promise((done) => s.close(done));
    const refused = await deliverWebhook({ ...message(), url: closed, allowInsecure: true, transport });
    expect(refused).toMatchObject({ ok: false, status: null });
    expect((refused as { error: string }).error).toMatch(/^the request failed/);

    const open = await receiver((_req, res) => res.writeHead(200).end());
    expect(await deliverWebhook({ ...message(), url: open.url, transport })).toEqual({ ok: false, status: null, error: 'http: is not sent to (https: only; allowInsecureWebhooks allows http:)' });
    expect(await deliverWebhook({ ...message(), url: 'ftp://127.0.0.1/x', allowInsecure: true, transport })).toMatchObject({ ok: false, status: null });
    expect(await deliverWebhook({ ...message(), url: 'not a url', transport })).toEqual({ ok: false, status: null, error: 'not a URL' });
    expect(open.received).toEqual([]);
  });
});

describe('nodeWebhookTransport keeps the time itself', () => {
  const request = (url: string, timeoutMs: number) => ({
    url: new URL(url),
    headers: { 'content-type': 'application/json' },
    body: '{}',
    timeoutMs,
    get signal(): AbortSignal {
      throw new Error('the signal was read');
    },
  });

  it('never reads the signal: an answer resolves, silence rejects with a TimeoutError after timeoutMs (and not long after)', async () => {
    const ok = await receiver((_req, res) => res.writeHead(202).end());
    await expect(node(request(ok.url, 1_000))).resolves.toEqual({ status: 202 });
    const silent = await receiver(() => undefined);
    const started = performance.now();
    const err = await node(request(silent.url, 250)).catch((e: unknown) => e);
    const took = performance.now() - started;
    expect((err as Error).name).toBe('TimeoutError');
    expect(took).toBeGreaterThanOrEqual(249);
    // (the transport looks up to 20 ms after a deadline; the rest is this machine's load)
    expect(took).toBeLessThan(2_000);
  });

  it('an answer whose status came in time counts, however slowly its body follows; the body is dropped', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('a');
      setTimeout(() => res.end('b'), 600);
    });
    await expect(node(request(r.url, 200))).resolves.toEqual({ status: 200 });
  });
});
