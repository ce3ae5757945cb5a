/**
 * The one build every published package shares (tsup: ESM and CommonJS, with .d.ts and
 * source maps, for Node 20). Each package's tsup.config.ts names its entries and any
 * option it needs beyond these; `npm run build` and test/packages.test.ts run tsup in
 * the package's folder, which reads that file.
 */
import { defineConfig, type Options } from 'tsup';

/**
 * A package's tsup config: the shared options with its `entry`, and `more` on top
 * (e.g. `external`, or a `dts` of its own).
 *
 * @example
 * ```ts
 * // packages/koa/tsup.config.ts
 * import { packageBuild } from '../../scripts/tsup.base.js';
 *
 * export default packageBuild({ index: 'src/index.ts' });
 * ```
 */
export function packageBuild(entry: Record<string, string>, more: Options = {}): Options {
  return defineConfig({ entry, format: ['esm', 'cjs'], dts: true, clean: true, sourcemap: true, target: 'node20', ...more }) as Options;
}
