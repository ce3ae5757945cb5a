import { packageBuild } from '../../scripts/tsup.base.js';

export default packageBuild(
  {
    index: 'src/index.ts',
    node: 'src/node.ts',
    // The `#platform` import (package.json `imports`): each runtime's default webhook
    // transport, chosen by the runtime's resolver, so left external in every other entry.
    'platform-node': 'src/platform/node.ts',
    'platform-web': 'src/platform/web.ts',
  },
  { external: ['#platform'] },
);
