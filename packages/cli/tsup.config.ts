import { packageBuild } from '../../scripts/tsup.base.js';

export default packageBuild({ index: 'src/index.ts', bin: 'src/bin.ts' }, { dts: { entry: { index: 'src/index.ts' } } });
