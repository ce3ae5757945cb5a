import { spawn } from 'node:child_process';
import net from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// `npm start` drains on SIGTERM: a request already under way is answered, new connections
// are refused, a connection that never sends a request is cut after IPOKIT_DRAIN_MS, and
// the process exits 0.

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));

describe('the demo server on SIGTERM', () => {
  it('finishes the request in flight, then exits 0', async () => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', MAIN], {
      env: { ...process.env, PORT: '0', DATABASE_URL: '', IPOKIT_DATASET: '', IPOKIT_DRAIN_MS: '2000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const lines = createInterface({ input: child.stdout! });
    const url = await new Promise<URL>((resolve) => lines.on('line', (line) => {
      const m = /at (http:\/\/localhost:\d+)\/ipos$/.exec(line);
      if (m) resolve(new URL(m[1]!));
    }));
    const port = Number(url.port);
    // an idle keep-alive connection, and a request whose headers are half sent
    const idle = net.connect(port, '127.0.0.1');
    const busy = net.connect(port, '127.0.0.1');
    await Promise.all([idle, busy].map((s) => new Promise((resolve) => s.once('connect', resolve))));
    let answer = '';
    busy.on('data', (d: Buffer) => (answer += d.toString()));
    busy.write('GET /ipos?status=listed HTTP/1.1\r\nHost: localhost\r\n');
    await new Promise((resolve) => setTimeout(resolve, 200));
    child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 200));
    // new connections are refused once the server closed its listener
    const refused = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(false);
      });
      s.once('error', () => resolve(true));
    });
    busy.write('Connection: close\r\n\r\n');
    const code = await exited;
    idle.destroy();
    expect(refused).toBe(true);
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(answer).toContain('"meta":{"count":');
    expect(code).toBe(0);
  }, 30_000);
});
