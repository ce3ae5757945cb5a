/**
 * `npm run bench`: every benchmark of the project, side by side, printed and written to
 * BENCHMARKS.md with the machine, the versions, the date and the exact commands.
 *
 *   npm run bench                      # HTTP (ipokit serve against bare node:http, each adapter against its framework), core, PostgreSQL, limiters and full stack (DATABASE_URL or 127.0.0.1:5432, REDIS_URL or 127.0.0.1:6379)
 *   npm run bench -- --only http,core  # a part of it (http, core, ipo-data, postgres, limiter, quotas, webhooks, sources, full-stack)
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { formatRows, type BenchRow } from './rows.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const args = process.argv.slice(2);
const onlyAt = args.indexOf('--only');
const ALL_PARTS = ['http', 'core', 'ipo-data', 'postgres', 'limiter', 'quotas', 'webhooks', 'sources', 'full-stack'];
const parts = new Set(onlyAt >= 0 ? (args[onlyAt + 1] ?? '').split(',') : ALL_PARTS);
const started = new Date();

const version = (pkg: string): string => {
  try {
    return (JSON.parse(readFileSync(`${ROOT}node_modules/${pkg}/package.json`, 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
};

const sections: Array<{ title: string; command: string; rows: BenchRow[] }> = [];
// Each part's table is printed as soon as it is done, so a later part's failure loses nothing.
const done = (section: { title: string; command: string; rows: BenchRow[] }): void => {
  sections.push(section);
  console.error(`\n## ${section.title}\n\n${formatRows(section.rows)}\n`);
};
if (parts.has('http')) {
  const { runHttpBench } = await import('./http.js');
  done({ title: 'HTTP', command: 'node --conditions=source --import tsx bench/http.ts --rounds 3 --seconds 5 --connections 32', rows: await runHttpBench({ rounds: 3, seconds: 5, connections: 32 }) });
}
if (parts.has('core')) {
  const { runCoreBench } = await import('./core.js');
  done({ title: 'Core and memory store', command: 'node --conditions=source --import tsx bench/core.ts', rows: await runCoreBench() });
}
if (parts.has('ipo-data')) {
  const { runIpoDataBench } = await import('./ipo-data.js');
  done({
    title: 'IPO data: the new fields on a list page, the subscription route',
    command: 'DATABASE_URL=... node --conditions=source --import tsx bench/ipo-data.ts',
    rows: await runIpoDataBench({ rounds: 3, seconds: 5 }),
  });
}
if (parts.has('postgres')) {
  const { runPostgresBench } = await import('./postgres.js');
  done({ title: 'PostgreSQL store', command: 'DATABASE_URL=... node --conditions=source --import tsx bench/postgres.ts', rows: await runPostgresBench() });
}
if (parts.has('limiter')) {
  const { runLimiterComparison } = await import('./limiter.js');
  done({
    title: 'Rate limiters: one hot account from 3 processes',
    command: 'DATABASE_URL=... REDIS_URL=... node --conditions=source --import tsx bench/limiter.ts',
    rows: await runLimiterComparison(),
  });
}
if (parts.has('quotas')) {
  const { runQuotasBench } = await import('./quotas.js');
  done({
    title: 'Quotas: three windows against one, a hot account on PostgreSQL, usage counting',
    command: 'DATABASE_URL=... REDIS_URL=... node --conditions=source --import tsx bench/quotas.ts',
    rows: await runQuotasBench(),
  });
}
if (parts.has('webhooks')) {
  const { runWebhooksBench } = await import('./webhooks.js');
  done({
    title: 'Webhooks: deliveries per second, commit to first attempt, event recording on an import',
    command: 'DATABASE_URL=... node --conditions=source --import tsx bench/webhooks.ts',
    rows: await runWebhooksBench(),
  });
}
if (parts.has('sources')) {
  const { runSourcesBench } = await import('./sources.js');
  done({
    title: 'Data in: pushing datasets over HTTP against importing them, the collector per run',
    command: 'DATABASE_URL=... node --conditions=source --import tsx bench/sources.ts',
    rows: await runSourcesBench({ rounds: { memory: 5, postgres: 3 } }),
  });
}
if (parts.has('full-stack')) {
  const { runFullStackBench } = await import('./full-stack.js');
  done({
    title: 'Full stack: Express 5 on each store',
    command: 'DATABASE_URL=... REDIS_URL=... node --conditions=source --import tsx bench/full-stack.ts --rounds 3 --seconds 5 --connections 32',
    rows: await runFullStackBench({ rounds: 3, seconds: 5, connections: 32 }),
  });
}

let pgVersion = '';
try {
  const url = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
  pgVersion = execFileSync('psql', [url, '-XAtc', 'SHOW server_version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
} catch {
  pgVersion = '(not reachable)';
}

const cpu = os.cpus();
const report = [
  '# Benchmarks',
  '',
  `Measured ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC by \`npm run bench\` (\`node --conditions=source --import tsx bench/run.ts\`).`,
  '',
  `- Machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}`,
  `- Node ${process.version}; express ${version('express')}, koa ${version('koa')}, @koa/router ${version('@koa/router')}, express-rate-limit ${version('express-rate-limit')}, autocannon ${version('autocannon')}, pg ${version('pg')}, ioredis ${version('ioredis')}; PostgreSQL ${pgVersion}`,
  '- These machines are noisy: contenders run interleaved in one run and only their ratios are compared; load generator and server share the 2 cores.',
  '',
  ...sections.flatMap((s) => [`## ${s.title}`, '', `\`${s.command}\``, '', formatRows(s.rows), '']),
].join('\n');

console.log(report);
if (ALL_PARTS.every((p) => parts.has(p))) writeFileSync(`${ROOT}BENCHMARKS.md`, report);
else console.log('\n(BENCHMARKS.md is written only by a full run.)');
