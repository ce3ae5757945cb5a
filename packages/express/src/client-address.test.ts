import { testClientAddress } from '@ipokit/testing';
import { ipoRouter } from './index.js';
import { EXPRESS_VERSIONS, listen } from './test-target.js';

// Express reads X-Forwarded-For only under `trust proxy`; the router takes req.ip as it is.
for (const framework of EXPRESS_VERSIONS) {
  testClientAddress({
    name: framework.name,
    start: (store, options, trustProxy) => {
      const app = framework.create();
      if (trustProxy) app.set('trust proxy', true);
      app.use('/ipos', ipoRouter(store, options));
      return listen(app, '/ipos');
    },
  });
}
