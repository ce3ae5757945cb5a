import { EventEmitter } from 'node:events';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { Database, type PostgresClient } from './client.js';

// pg-pool takes its 'error' listener off a connection while it is checked out. When the
// server goes away between two statements of a transaction, pg emits 'error' on that
// connection: with no listener, the process would crash. The store listens meanwhile.

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('Database.transaction on a pool', () => {
  it('keeps a connection error raised between statements, and gives the connection back as broken', async () => {
    const released: Array<Error | boolean | undefined> = [];
    const connection = Object.assign(new EventEmitter(), {
      query: async () => ({ rows: [] }),
      release: (err?: Error | boolean) => void released.push(err),
    });
    const pool = { query: async () => ({ rows: [] }), connect: async () => connection, totalCount: 1 } as unknown as PostgresClient;
    const db = new Database(pool);
    const lost = new Error('Connection terminated unexpectedly');
    await db.transaction(async (tx) => {
      await tx.query('SELECT 1');
      connection.emit('error', lost); // throws here if nobody listens
      await tx.query('SELECT 2');
    });
    expect(released).toEqual([lost]);
    expect(connection.listenerCount('error')).toBe(0);
  });

  it.runIf(Boolean(process.env.DATABASE_URL))('survives the server ending the connection mid-transaction (real PostgreSQL)', async () => {
    const url = process.env.DATABASE_URL!;
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    pool.on('error', () => {});
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const db = new Database(pool);
      await expect(
        db.transaction(async (tx) => {
          const [row] = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
          await admin.query('SELECT pg_terminate_backend($1)', [row!.pid]);
          await sleep(300); // the connection dies while no statement runs on it
          await tx.query('SELECT 1');
        }),
      ).rejects.toMatchObject({ code: 'ERR:UNAVAILABLE' });
      expect(pool.totalCount - pool.idleCount).toBe(0);
      expect(await db.query<{ n: number }>('SELECT 1 AS n')).toEqual([{ n: 1 }]);
    } finally {
      await admin.end();
      await pool.end();
    }
  });
});
