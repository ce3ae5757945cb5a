/**
 * For the connection-limit tests: raw TCP connections to a server, so that a test can open
 * a connection that sends nothing, half a request line, or several requests on one socket,
 * and see when the server closes it (fetch would hide all of that behind its pool).
 */
import { connect, type Socket } from 'node:net';

/** One raw connection to a server. */
export interface RawConnection {
  socket: Socket;
  /** Everything the server sent so far. */
  received(): string;
  /** True once the server (or the test) closed it. */
  isClosed(): boolean;
  /** Resolves, once closed, with the milliseconds from connecting to closing. */
  closed: Promise<number>;
  /** Sends `GET path` (keep-alive) and resolves with the status once the whole response is in. */
  get(path: string): Promise<number>;
}

/**
 * Connects to `port`, and resolves once connected.
 *
 * @example
 * ```ts
 * const silent = await connectRaw(port);
 * expect(await silent.closed).toBeLessThan(1000);
 * ```
 */
export function connectRaw(port: number, host = '127.0.0.1'): Promise<RawConnection> {
  const socket = connect(port, host);
  let data = '';
  let closed = false;
  let onData: (() => void) | undefined;
  // Without a reader the client never sees the server's FIN: the socket would look open for ever.
  socket.on('data', (chunk: Buffer) => {
    data += chunk.toString('latin1');
    onData?.();
  });
  socket.on('error', () => undefined);
  const start = Date.now();
  const closedAt = new Promise<number>((resolve) =>
    socket.once('close', () => {
      closed = true;
      onData?.();
      resolve(Date.now() - start);
    }),
  );
  const get = (path: string) =>
    new Promise<number>((resolve, reject) => {
      const from = data.length;
      onData = () => {
        const text = data.slice(from);
        const end = text.indexOf('\r\n\r\n');
        const status = /^HTTP\/1\.1 (\d{3}) /.exec(text);
        const length = /\r\ncontent-length: *(\d+)\r\n/i.exec(text.slice(0, end + 2));
        if (end >= 0 && status !== null && length !== null && text.length >= end + 4 + Number(length[1])) {
          onData = undefined;
          resolve(Number(status[1]));
        } else if (closed) {
          onData = undefined;
          reject(new Error(`the connection closed before a whole response; got ${JSON.stringify(text.slice(0, 200))}`));
        }
      };
      socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve({ socket, received: () => data, isClosed: () => closed, closed: closedAt, get }));
    socket.once('error', reject);
  });
}

/**
 * Resolves like `promise`, or rejects naming `what` when it has not settled within `ms`.
 *
 * @example
 * ```ts
 * await within(silent.closed, 1000, 'the server closing an idle connection');
 * ```
 */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * Waits until `check` is true, polling every 10 ms, for at most `ms`.
 *
 * @example
 * ```ts
 * await until(async () => (await connections(server)) === 2, 1000, 'both connections accepted');
 * ```
 */
export async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
