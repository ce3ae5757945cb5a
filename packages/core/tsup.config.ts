import { packageBuild } from '../../scripts/tsup.base.js';

export default packageBuild(
  {
    index: 'src/index.ts',
    backend: 'src/backend.ts',
    adapter: 'src/adapter.ts',
    // The `#crypto` import (package.json `imports`): SHA-256 and HMAC-SHA256 from node:crypto
    // on Node, @noble/hashes elsewhere, chosen by the runtime's resolver, so left external
    // in every other entry.
    'crypto-node': 'src/crypto/node.ts',
    'crypto-web': 'src/crypto/web.ts',
  },
  { external: ['#crypto'] },
);
