/**
 * HTTP benchmark: each contender runs in its own process; autocannon drives it from this one.
 * Rounds interleave the contenders (A B A B ...) and the table reports medians and ratios.
 *
 *   npm run bench -- [--rounds 5] [--seconds 5] [--connections 32]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const rounds = Number(args.get('rounds') ?? 5);
const seconds = Number(args.get('seconds') ?? 5);
const connections = Number(args.get('connections') ?? 32);
const contenders = (args.get('contenders') ?? 'ipokit-express,bare-express').split(',');
const serverFile = fileURLToPath(new URL('./http-server.ts', import.meta.url));

interface Started {
  child: ChildProcess;
  port: number;
  key: string;
  id: string;
}

async function start(name: string): Promise<Started> {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', serverFile, name], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
  });
  return { child, ...(JSON.parse(line) as { port: number; key: string; id: string }) };
}

async function run(s: Started, duration: number): Promise<number> {
  const result = await autocannon({
    url: `http://127.0.0.1:${s.port}/ipos/${s.id}`,
    headers: { 'x-api-key': s.key },
    connections,
    duration,
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`non-2xx ${result.non2xx}, errors ${result.errors}`);
  return result.requests.average;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const samples = new Map<string, number[]>(contenders.map((c) => [c, []]));
for (let round = 0; round < rounds; round++) {
  for (const name of round % 2 === 0 ? contenders : [...contenders].reverse()) {
    const s = await start(name);
    try {
      await run(s, 1); // warm-up
      samples.get(name)!.push(await run(s, seconds));
    } finally {
      s.child.kill();
    }
  }
}
const base = median(samples.get(contenders[0]!)!);
console.log(`GET /ipos/{id}, ${connections} connections, ${rounds} rounds of ${seconds} s, Node ${process.version}`);
console.log('| contender | req/s (median) | samples | ratio to first |');
console.log('|---|---|---|---|');
for (const [name, xs] of samples) {
  const m = median(xs);
  console.log(`| ${name} | ${Math.round(m)} | ${xs.map((x) => Math.round(x)).join(', ')} | ${(m / base).toFixed(2)} |`);
}
