import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 to a PostgreSQL server, that can be cut: every connection
 * through it closed and new ones refused (as when the server or the network goes away),
 * then restored on the same port. For tests and scripts/faults.ts; not published.
 *
 * @example
 * ```ts
 * const proxy = await cuttableProxy(new URL(process.env.DATABASE_URL!));
 * await proxy.cut(); await proxy.restore(); await proxy.close();
 * ```
 */
export async function cuttableProxy(target: URL): Promise<{ port: number; cut(): Promise<void>; restore(): Promise<void>; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;
  let port = 0;
  const listen = async (): Promise<void> => {
    const s = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      for (const sock of [client, upstream]) {
        sockets.add(sock);
        sock.on('close', () => sockets.delete(sock));
        sock.on('error', () => sock.destroy());
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => s.listen(port, '127.0.0.1', resolve));
    port = (s.address() as AddressInfo).port;
    server = s;
  };
  const stop = async (): Promise<void> => {
    const s = server;
    server = null;
    for (const sock of sockets) sock.destroy();
    if (s !== null) await new Promise((resolve) => s.close(resolve));
  };
  await listen();
  return { port, cut: stop, restore: listen, close: stop };
}
