import { packageBuild } from '../../scripts/tsup.base.js';

export default packageBuild(
  { index: 'src/index.ts' },
  {
    // The types of @ipokit/core that the client uses are inlined into dist/index.d.(c)ts, so
    // the published client needs @ipokit/core neither at run time nor for its types. `paths`
    // points at core's sources: tsup's `dts.resolve` would follow core's `types` to its built,
    // chunked .d.ts files and leave an import of a chunk behind. client.test.ts checks the output.
    dts: { compilerOptions: { paths: { '@ipokit/core': ['../core/src/index.ts'] } } },
  },
);
