// `npm ci` runs this (the root package's `prepare`): it builds the JavaScript of every
// workspace package that has a tsup.config.ts, without the .d.ts files (the slow part), and
// runs `node build.mjs` in every workspace that has that instead (the dashboard), so
// that a fresh clone runs the README's blocks with plain `node`. `npm run build` (CI,
// publishing) still builds everything with types. One process, ~2 s. Without tsup (an
// install with --omit=dev) it only warns.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

const tsup = await import('tsup').catch((err) => {
  if (err.code === 'ERR_MODULE_NOT_FOUND') return null;
  throw err;
});
if (tsup === null) {
  console.warn('prepare: tsup is not installed (dev dependencies omitted), so dist/ is not built');
} else {
  const root = process.cwd();
  const workspaces = JSON.parse(readFileSync('package.json', 'utf8')).workspaces.filter((w) => existsSync(`${w}/tsup.config.ts`));
  for (const w of workspaces) {
    process.chdir(`${root}/${w}`);
    await tsup.build({ dts: false, silent: true, esbuildOptions: (o) => void (o.absWorkingDir = process.cwd()) });
  }
  const scripted = JSON.parse(readFileSync(`${root}/package.json`, 'utf8')).workspaces.filter((w) => existsSync(`${root}/${w}/build.mjs`) && !existsSync(`${root}/${w}/tsup.config.ts`));
  for (const w of scripted) {
    const run = spawnSync(process.execPath, ['build.mjs'], { cwd: `${root}/${w}`, stdio: 'inherit' });
    if (run.status !== 0) throw new Error(`prepare: node build.mjs failed in ${w}`);
  }
}
