import { spawn } from 'node:child_process';
import net from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// `npm start` has the connection limits of `ipokit serve`: run under `ulimit -n 200`, it
// takes at most 200 - 64 = 136 connections (the rest of the open files are kept for the
// process), refuses the next one, and still answers on those it holds.

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const OPEN_FILES = 200;
const MAX = OPEN_FILES - 64;

/** A raw connection that reads what it is sent, so that it sees the server close it. */
function open(port: number): Promise<{ socket: net.Socket; received: () => string; closed: Promise<void> }> {
  const socket = net.connect(port, '127.0.0.1');
  let data = '';
  socket.on('data', (d: Buffer) => (data += d.toString()));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve({ socket, received: () => data, closed }));
    socket.once('error', reject);
  });
}

describe('the demo server’s connection limits', () => {
  it.runIf(process.platform === 'linux')(`prints them, and under ulimit -n ${OPEN_FILES} refuses connection ${MAX + 1} while serving the ${MAX} it holds`, async () => {
    const child = spawn('/bin/sh', ['-c', `ulimit -n ${OPEN_FILES} && exec "$0" "$@"`, process.execPath, '--conditions=source', '--import', 'tsx', MAIN], {
      env: { ...process.env, PORT: '0', DATABASE_URL: '', IPOKIT_DATASET: '', IPOKIT_DRAIN_MS: '500' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const held: Array<Awaited<ReturnType<typeof open>>> = [];
    try {
      const lines: string[] = [];
      const input = createInterface({ input: child.stdout! });
      const port = await new Promise<number>((resolve, reject) => {
        input.on('line', (line) => {
          lines.push(line);
          const m = /at http:\/\/localhost:(\d+)\/ipos$/.exec(lines[0] ?? '');
          if (m && lines.length === 2) resolve(Number(m[1]));
        });
        void exited.then((code) => reject(new Error(`the demo exited with ${code}: ${stderr}`)));
      });
      expect(lines[1]).toBe(`Connections: at most ${MAX}, each closed after 30 s without traffic; timeouts: headers 10 s, request 30 s, keep-alive 5 s.`);

      for (let i = 0; i < MAX; i++) held.push(await open(port));
      // the server counts a connection when it accepts it: one round trip on the last one makes sure all are counted
      const last = held.at(-1)!;
      last.socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await new Promise<void>((resolve) => last.socket.once('data', () => resolve()));
      expect(last.received()).toMatch(/^HTTP\/1\.1 200 OK/);

      const extra = await open(port).catch(() => null);
      if (extra !== null) {
        await Promise.race([extra.closed, new Promise((_resolve, reject) => setTimeout(() => reject(new Error('connection past the limit still open')), 1000))]);
        expect(extra.received()).toBe('');
      }
      const first = held[0]!;
      first.socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await new Promise<void>((resolve) => first.socket.once('data', () => resolve()));
      expect(first.received()).toMatch(/^HTTP\/1\.1 200 OK/);
    } finally {
      for (const h of held) h.socket.destroy();
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 30_000);
});
