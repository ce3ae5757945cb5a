import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyConnectionLimits, DEFAULT_CONNECTION_LIMITS, openFilesLimit, openFilesWarning, resolveConnectionLimits, type ConnectionLimits } from './connection-limits.js';
import { connectRaw, within } from './test-sockets.js';

describe('resolveConnectionLimits', () => {
  it('fills in the defaults: 10 s headers, 30 s request, 5 s keep-alive, 30 s idle, 1000 connections', () => {
    expect(resolveConnectionLimits({}, { openFiles: null })).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      idleTimeoutMs: 30_000,
      maxConnections: 1000,
    });
    expect(resolveConnectionLimits({}, { openFiles: null })).toEqual(DEFAULT_CONNECTION_LIMITS);
  });

  it.each([
    [1024, 960],
    [1064, 1000],
    [1_048_576, 1000],
    [100, 36],
    [50, 1],
  ])('keeps 64 of %i open files for the rest of the process: at most %i connections by default', (openFiles, max) => {
    expect(resolveConnectionLimits({}, { openFiles }).maxConnections).toBe(max);
  });

  it('keeps a maxConnections that is given, even past the open-files limit (serve warns about it)', () => {
    expect(resolveConnectionLimits({ maxConnections: 5000 }, { openFiles: 1024 }).maxConnections).toBe(5000);
  });

  it('lowers the default headers and keep-alive timeouts to a shorter request or idle timeout given, as Node does', () => {
    const none = { openFiles: null };
    expect(resolveConnectionLimits({ requestTimeoutMs: 4000 }, none)).toMatchObject({ headersTimeoutMs: 4000, requestTimeoutMs: 4000 });
    expect(resolveConnectionLimits({ requestTimeoutMs: 0 }, none)).toMatchObject({ headersTimeoutMs: 10_000, requestTimeoutMs: 0 });
    expect(resolveConnectionLimits({ idleTimeoutMs: 2000 }, none)).toMatchObject({ keepAliveTimeoutMs: 2000, idleTimeoutMs: 2000 });
    expect(resolveConnectionLimits({ idleTimeoutMs: 0 }, none)).toMatchObject({ keepAliveTimeoutMs: 5000, idleTimeoutMs: 0 });
  });

  it.each<[Partial<ConnectionLimits>, RegExp]>([
    [{ headersTimeoutMs: 5000, requestTimeoutMs: 1000 }, /^headersTimeoutMs \(5000\) must not exceed requestTimeoutMs \(1000\): the headers are part of the request; 0 turns either off$/],
    [{ headersTimeoutMs: 40_000 }, /^headersTimeoutMs \(40000\) must not exceed requestTimeoutMs \(30000, the default\)/],
    [{ keepAliveTimeoutMs: 60_000 }, /^keepAliveTimeoutMs \(60000\) must not exceed idleTimeoutMs \(30000, the default\): a connection waiting for its next request is idle too; 0 turns either off$/],
    [{ headersTimeoutMs: -1 }, /^headersTimeoutMs must be a whole number of milliseconds from 0 to 2147483647, got -1$/],
    [{ requestTimeoutMs: 1.5 }, /^requestTimeoutMs must be a whole number of milliseconds from 0 to 2147483647, got 1\.5$/],
    [{ idleTimeoutMs: 2 ** 31 }, /^idleTimeoutMs must be a whole number of milliseconds from 0 to 2147483647, got 2147483648$/],
    [{ keepAliveTimeoutMs: Number.NaN }, /^keepAliveTimeoutMs must be a whole number/],
    [{ maxConnections: 0 }, /^maxConnections must be a whole number from 1 to 1000000, got 0$/],
  ])('refuses %j', (given, message) => {
    expect(() => resolveConnectionLimits(given, { openFiles: null })).toThrow(RangeError);
    expect(() => resolveConnectionLimits(given, { openFiles: null })).toThrow(message);
  });

  it('names the limits as the caller does (the CLI: its flags)', () => {
    const nameOf = (key: keyof ConnectionLimits) => `--${key}`;
    expect(() => resolveConnectionLimits({ headersTimeoutMs: 2, requestTimeoutMs: 1 }, { openFiles: null, nameOf })).toThrow(/^--headersTimeoutMs \(2\) must not exceed --requestTimeoutMs \(1\)/);
  });

  it('accepts 0 (off) on either side of a pair', () => {
    expect(() => resolveConnectionLimits({ headersTimeoutMs: 60_000, requestTimeoutMs: 0, keepAliveTimeoutMs: 60_000, idleTimeoutMs: 0 }, { openFiles: null })).not.toThrow();
  });
});

describe('openFilesLimit and openFilesWarning', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ipokit-limits-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const limits = (soft: string) =>
    `Limit                     Soft Limit           Hard Limit           Units     \nMax processes             63494                63494                processes \nMax open files            ${soft.padEnd(21)}524288               files     \n`;

  it('reads the soft limit from a /proc/<pid>/limits file; null when it is unlimited or unreadable', async () => {
    await writeFile(join(dir, 'limits'), limits('1024'));
    expect(openFilesLimit(join(dir, 'limits'))).toBe(1024);
    await writeFile(join(dir, 'unlimited'), limits('unlimited'));
    expect(openFilesLimit(join(dir, 'unlimited'))).toBeNull();
    expect(openFilesLimit(join(dir, 'missing'))).toBeNull();
  });

  it.runIf(process.platform === 'linux')('reads this process’s own limit on Linux', () => {
    expect(openFilesLimit()).toBeGreaterThan(0);
  });

  it('warns when maxConnections leaves fewer than 64 files for the rest of the process', () => {
    expect(openFilesWarning(5000, 1024)).toBe(
      'at most 5000 connections, but the open-files limit is 1024 and 64 are kept for the database and the process: past 960 connections new ones may fail (EMFILE); raise the limit (ulimit -n) or lower the connections',
    );
    expect(openFilesWarning(960, 1024)).toBeNull();
    expect(openFilesWarning(5000, null)).toBeNull();
  });
});

describe('applyConnectionLimits on a node:http server', () => {
  /** A plain server with these limits, listening on a free port; closed after `test`. */
  async function serving(limits: Partial<ConnectionLimits>, test: (port: number, server: Server) => Promise<void>): Promise<void> {
    const server = createServer((_req, res) => res.end('ok'));
    applyConnectionLimits(server, limits);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await test((server.address() as AddressInfo).port, server);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  it('sets the server’s timeouts and maxConnections, and returns what it applied', () => {
    const server = createServer();
    const applied = applyConnectionLimits(server, { headersTimeoutMs: 1000, requestTimeoutMs: 2000, keepAliveTimeoutMs: 300, idleTimeoutMs: 400, maxConnections: 7 });
    expect(applied).toEqual({ headersTimeoutMs: 1000, requestTimeoutMs: 2000, keepAliveTimeoutMs: 300, idleTimeoutMs: 400, maxConnections: 7 });
    expect([server.headersTimeout, server.requestTimeout, server.keepAliveTimeout, server.timeout, server.maxConnections]).toEqual([1000, 2000, 300, 400, 7]);
  });

  it('refuses limits that contradict each other, leaving the server as it was', () => {
    const server = createServer();
    expect(() => applyConnectionLimits(server, { keepAliveTimeoutMs: 500, idleTimeoutMs: 400 })).toThrow(/^keepAliveTimeoutMs \(500\) must not exceed idleTimeoutMs \(400\)/);
    expect(server.timeout).toBe(0);
  });

  // What Node itself does, which the idle timeout is there for. On Node 20 the headers timeout
  // does close a connection that never sends a byte (with a 408), but only while a request is
  // awaited: between two requests on a keep-alive connection it no longer applies, and with
  // the keep-alive timeout off such a connection stays open for ever but for the idle timeout.
  it('Node: the headers timeout alone answers 408 to a connection that never sends a byte', async () => {
    await serving({ headersTimeoutMs: 300, requestTimeoutMs: 0, idleTimeoutMs: 0 }, async (port) => {
      const silent = await connectRaw(port);
      await within(silent.closed, 1500, 'the server closing a connection that sends nothing');
      expect(silent.received()).toMatch(/^HTTP\/1\.1 408 /);
    });
  });

  it('Node: the headers timeout does not close an idle keep-alive connection; the idle timeout does', async () => {
    await serving({ headersTimeoutMs: 300, requestTimeoutMs: 0, keepAliveTimeoutMs: 0, idleTimeoutMs: 0 }, async (port) => {
      const kept = await connectRaw(port);
      expect(await kept.get('/')).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(kept.isClosed()).toBe(false);
      kept.socket.destroy();
    });
    await serving({ headersTimeoutMs: 300, requestTimeoutMs: 0, keepAliveTimeoutMs: 0, idleTimeoutMs: 300 }, async (port) => {
      const kept = await connectRaw(port);
      expect(await kept.get('/')).toBe(200);
      await within(kept.closed, 1500, 'the idle timeout closing a keep-alive connection');
    });
  });
});
