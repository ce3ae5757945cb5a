/**
 * A local webhook receiver for bench/webhooks.ts, in a process of its own (as a real
 * receiver is): answers 204 to every POST, counts them, and notes when each `webhook-id`
 * first arrived (epoch ms with fractions, `performance.timeOrigin + performance.now()`, which
 * the bench compares with its own clock on the same machine).
 */
import http from 'node:http';

let count = 0;
const arrivals = new Map<string, number>();
const server = http.createServer({ noDelay: true }, (req, res) => {
  const id = String(req.headers['webhook-id']);
  if (!arrivals.has(id)) arrivals.set(id, performance.timeOrigin + performance.now());
  req.resume();
  req.on('end', () => {
    count++;
    res.writeHead(204).end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as { port: number }).port }));

process.on('message', (m: { ask: 'count' } | { ask: 'arrival'; id: string } | { ask: 'reset' }) => {
  if (m.ask === 'count') process.send?.({ count });
  else if (m.ask === 'arrival') process.send?.({ at: arrivals.get(m.id) ?? null });
  else {
    count = 0;
    arrivals.clear();
    process.send?.({ ok: true });
  }
});
