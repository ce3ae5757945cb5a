import { testClientAddress } from '@ipokit/testing';
import { ipoRouter } from './index.js';
import { KOA_VERSIONS, listen } from './test-target.js';

// Koa reads X-Forwarded-For only with `app.proxy = true`; the router takes ctx.ip as it is.
for (const framework of KOA_VERSIONS) {
  testClientAddress({
    name: framework.name,
    start: (store, options, trustProxy) => {
      const app = framework.create();
      app.proxy = trustProxy;
      app.use(ipoRouter(store, { ...options, prefix: '/ipos' }));
      return listen(app, '/ipos');
    },
  });
}
