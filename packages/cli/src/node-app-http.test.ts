import type { IncomingMessage } from 'node:http';
import type { IpoRouterOptions, Store } from '@ipokit/core';
import { accountHandlerOf, createIpoHandler, outsideAnswer } from '@ipokit/core/adapter';
import { memoryStore } from '@ipokit/storage-memory';
import { testAccountRouter, testHttp, type AccountHttpTarget, type HttpTarget } from '@ipokit/testing';
import { listen } from '../../express/src/test-target.js';
import { nodeApp, type NodeAnswer } from './node-app.js';

// The shared HTTP suites of @ipokit/testing against the node:http listener of `ipokit serve`,
// as they run against the Express, Koa and fetch adapters: the IPO routes (alone, and inside
// an app with routes of its own around them) and the account router.

const text = (status: number, body: string): NodeAnswer => ({ status, headers: { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': String(Buffer.byteLength(body)) }, body });
const onError = (err: unknown) => console.error('[node-app test]', err);

const nodeTarget: HttpTarget = {
  name: 'node:http (ipokit serve)',
  start: (store, options) => listen(nodeApp({ api: { handle: createIpoHandler(store, options), mount: '/ipos' }, outside: outsideAnswer('/ipos', 'the IPO API'), onError }), '/ipos'),
  startInApp: (store: Store, options: IpoRouterOptions) => {
    const routes: Record<string, NodeAnswer> = { '/health': text(200, 'ok'), '/iposX': text(200, 'app iposX'), '/other': text(200, 'app other') };
    const app = nodeApp({
      first: (method, path) => (method === 'GET' && routes[path] !== undefined ? Promise.resolve(routes[path]) : null),
      api: { handle: createIpoHandler(store, options), mount: '/ipos' },
      outside: text(404, 'app 404'),
      onError,
    });
    return listen((req, res) => {
      res.setHeader('x-app', 'before');
      app(req, res);
    }, '/ipos');
  },
};

const nodeAccountTarget: AccountHttpTarget = {
  name: 'node:http (ipokit serve)',
  start: (store, options) => {
    const account = (req: IncomingMessage) => (req.headers['x-test-account'] as string | undefined) ?? null;
    const { handle } = accountHandlerOf<[req: IncomingMessage]>(store, { ...options, account }, { accountArgs: '(req)', loadDashboard: () => import('@ipokit/dashboard') });
    const app = nodeApp({
      account: { handle, mount: '/account', accountOf: account },
      api: { handle: createIpoHandler(store, options), mount: '/nowhere' },
      outside: outsideAnswer('/account', 'the account router'),
      onError,
    });
    return listen(app, '/account');
  },
};

testHttp({ target: nodeTarget, createStore: () => memoryStore(), destroyStore: (s) => s.close?.() });
testAccountRouter({ target: nodeAccountTarget, createStore: () => memoryStore(), destroyStore: (s) => s.close?.() });
