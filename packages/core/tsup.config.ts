import { packageBuild } from '../../scripts/tsup.base.js';

export default packageBuild(
  {
    index: 'src/index.ts',
    testing: 'src/testing.ts',
    backend: 'src/backend.ts',
    adapter: 'src/adapter.ts',
    node: 'src/node.ts',
    // The `#platform` import (package.json `imports`): each runtime's default webhook
    // transport, chosen by the runtime's resolver, so left external in every other entry.
    'platform-node': 'src/platform/node.ts',
    'platform-web': 'src/platform/web.ts',
    // The `#crypto` import: SHA-256 and HMAC-SHA256 from node:crypto on Node, @noble/hashes
    // elsewhere, chosen the same way.
    'crypto-node': 'src/crypto/node.ts',
    'crypto-web': 'src/crypto/web.ts',
  },
  { external: ['#platform', '#crypto'] },
);
