import { packageBuild } from '../../scripts/tsup.base.js';

export default packageBuild({ index: 'src/index.ts', node: 'src/node.ts' });
