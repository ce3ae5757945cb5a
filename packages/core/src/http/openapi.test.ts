import { readFileSync } from 'node:fs';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createIpoHandler, type HandlerRequest, type HandlerResponse, type IpoHandler } from './handler.js';
import { OPENAPI_PATH, openApiDocument, type JsonSchema, type OpenApiDocument } from './openapi.js';
import { isOpenApiPath, mountPathOf } from './request.js';
import { fuzzRequestArbitrary, type FuzzRequest, type HeaderPart } from '@ipokit/testing';
import { FIXTURE_NOW, seedFixture, type FixtureKeys } from '@ipokit/testing';
import { openApiValidator, type OpenApiValidator } from '@ipokit/testing';
import { referenceStore } from '@ipokit/testing';
import type { Store } from '../model/types.js';

const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;

const ROUTES = ['/', '/{identifier}', '/{identifier}/gmp', '/{identifier}/subscription'] as const;
const DOC_ID = 'https://ipokit.invalid/test-openapi.json';

/** Every place of the document that holds a JSON Schema, as a JSON pointer (unescaped parts). */
function schemaLocations(doc: OpenApiDocument): string[][] {
  const out: string[][] = [];
  for (const name of Object.keys(doc.components.schemas)) out.push(['components', 'schemas', name]);
  for (const name of Object.keys(doc.components.parameters)) out.push(['components', 'parameters', name, 'schema']);
  for (const name of Object.keys(doc.components.headers)) out.push(['components', 'headers', name, 'schema']);
  for (const path of ROUTES) {
    for (const method of ['get', 'head'] as const) {
      for (const [status, response] of Object.entries(doc.paths[path][method].responses)) {
        for (const media of Object.keys(response.content ?? {})) out.push(['paths', path, method, 'responses', status, 'content', media, 'schema']);
        for (const [name, header] of Object.entries(response.headers)) {
          if (!('$ref' in header)) out.push(['paths', path, method, 'responses', status, 'headers', name, 'schema']);
        }
      }
    }
  }
  return out;
}

/** Every `$ref` in the document, wherever it is. */
function refsOf(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) refsOf(v, found);
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') found.push(v);
      else refsOf(v, found);
    }
  }
  return found;
}

function resolvePointer(doc: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = doc;
  for (const raw of ref.slice(2).split('/')) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, part)) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

const pointerText = (parts: string[]): string => parts.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');

describe('openApiDocument', () => {
  it('is OpenAPI 3.1.0 with the JSON Schema 2020-12 dialect, a fresh plain JSON object on every call', () => {
    const doc = openApiDocument();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.jsonSchemaDialect).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
    expect(doc.servers).toEqual([{ url: '/ipos', description: expect.any(String) }]);
    expect(openApiDocument({ serverUrl: 'https://api.example.com/ipos' }).servers[0]?.url).toBe('https://api.example.com/ipos');
    // fresh: changing one document changes no other
    doc.paths['/'].get.summary = 'changed';
    doc.components.schemas['Ipo']!.required!.push('changed');
    const again = openApiDocument();
    expect(again.paths['/'].get.summary).not.toBe('changed');
    expect(again.components.schemas['Ipo']!.required).not.toContain('changed');
    for (const bad of ['', 7, null]) {
      expect(() => openApiDocument({ serverUrl: bad as unknown as string }), String(bad)).toThrow(/serverUrl must be a non-empty string/);
    }
  });

  it('carries the version of @ipokit/core', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(openApiDocument().info.version).toBe(pkg.version);
  });

  it('compiles in ajv 2020 (strict, with formats): every schema compiles and every $ref resolves', () => {
    const doc = openApiDocument();
    const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
    addFormats(ajv);
    ajv.addVocabulary(['openapi', 'jsonSchemaDialect', 'info', 'servers', 'tags', 'security', 'paths', 'components']);
    ajv.addSchema({ ...doc, $id: DOC_ID });
    const locations = schemaLocations(doc);
    expect(locations.length).toBeGreaterThan(60);
    for (const location of locations) {
      const schema = resolvePointer(doc, `#/${location.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`);
      expect(schema, location.join('/')).toBeDefined();
      expect(ajv.validateSchema(schema as JsonSchema), `${location.join('/')}: ${ajv.errorsText()}`).toBe(true);
      expect(ajv.getSchema(`${DOC_ID}#/${pointerText(location)}`), location.join('/')).toBeTypeOf('function');
    }
    const refs = refsOf(doc);
    expect(refs.length).toBeGreaterThan(50);
    for (const ref of new Set(refs)) expect(resolvePointer(doc, ref), ref).toBeDefined();
  });

  it('has a GET and a HEAD operation for each route, with the statuses each can answer', () => {
    const doc = openApiDocument();
    expect(Object.keys(doc.paths)).toEqual([...ROUTES]);
    const ids = new Set<string>();
    const common = ['200', '400', '401', '403', '405', '414', '429', '500', '503'];
    for (const path of ROUTES) {
      const item = doc.paths[path];
      expect(Object.keys(item).filter((k) => ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'].includes(k))).toEqual(['get', 'head']);
      // Any plan may read the subscription series: it answers no 403.
      const keyedStatuses = path === '/{identifier}/subscription' ? common.filter((x) => x !== '403') : common;
      const statuses = path === '/' ? common : [...keyedStatuses, '404'];
      for (const method of ['get', 'head'] as const) {
        const op = item[method];
        ids.add(op.operationId);
        expect(Object.keys(op.responses).sort(), `${method} ${path}`).toEqual([...statuses].sort());
        expect(op.security).toEqual(path === '/' ? [{ apiKey: [] }, {}] : [{ apiKey: [] }]);
        for (const [status, response] of Object.entries(op.responses)) {
          if (method === 'head') expect(response.content, `HEAD ${path} ${status}`).toBeUndefined();
          else expect(Object.keys(response.content ?? {}), `GET ${path} ${status}`).toEqual(['application/json']);
          expect(response.headers['Cache-Control']).toBeDefined();
          const rate = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'].map((h) => response.headers[h] !== undefined);
          expect(rate, `${status} rate-limit headers`).toEqual(['405', '414', '500', '503'].includes(status) ? [false, false, false] : [true, true, true]);
          expect(response.headers['Retry-After'] !== undefined, status).toBe(status === '429');
          expect(response.headers['Allow'] !== undefined, status).toBe(status === '405');
        }
        expect(op.responses['429']?.headers['RateLimit-Limit']).toMatchObject({ required: true });
      }
      expect(item.head.responses['200']?.headers).toEqual(item.get.responses['200']?.headers);
      // the identifier is a path parameter of the templated paths
      const pathParams = (item.parameters ?? []).map((p) => ('$ref' in p ? resolvePointer(doc, p.$ref) : p));
      expect(pathParams).toEqual(path === '/' ? [] : [expect.objectContaining({ name: 'identifier', in: 'path', required: true })]);
    }
    expect(ids.size).toBe(8);
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-api-key' });
    const list = doc.paths['/'].get.parameters.map((p) => ('$ref' in p ? (resolvePointer(doc, p.$ref) as { name: string }).name : p.name));
    expect(list).toEqual(['status', 'type', 'source', 'startDate', 'endDate', 'year', 'q', 'page', 'limit', 'includeGmp']);
  });
});

describe('the openapi option of the handler', () => {
  let store: Store;
  let keys: FixtureKeys;
  beforeAll(async () => {
    store = referenceStore();
    keys = (await seedFixture(store)).keys;
  });
  const request = (url: string, path: string, method = 'GET', key?: string): HandlerRequest => ({
    method,
    url,
    path,
    query: url.includes('?') ? url.slice(url.indexOf('?') + 1) : '',
    headers: key === undefined ? {} : { 'x-api-key': key },
    clientAddress: '192.0.2.7',
  });

  it('serves the document with servers = the mount path as the request reached it, cached per mount', async () => {
    const handle = createIpoHandler(store, { now: () => new Date(FIXTURE_NOW), openapi: true, limits: {} });
    for (const [url, path, mount] of [
      ['/ipos/-/openapi.json', '/-/openapi.json', '/ipos'],
      ['/IPOS/-/openapi.json/?x=1', '/-/openapi.json/', '/IPOS'],
      ['http://example.com/v1/ipos/-/openapi%2Ejson', '/-/openapi%2Ejson', '/v1/ipos'],
      ['/-/openapi.json', '/-/openapi.json', '/'],
    ] as const) {
      for (let i = 0; i < 2; i++) {
        const res = await handle(request(url, path));
        expect(res.status, url).toBe(200);
        expect(res.headers).toEqual({ 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'private, no-store', 'Content-Length': String(Buffer.byteLength(res.body)) });
        expect(res.body).toBe(JSON.stringify(openApiDocument({ serverUrl: mount })));
      }
    }
    // many mounts: the cache stays bounded and every answer stays right
    for (let i = 0; i < 40; i++) {
      const res = await handle(request(`/t${i}/-/openapi.json`, '/-/openapi.json'));
      expect((JSON.parse(res.body) as OpenApiDocument).servers[0]?.url).toBe(`/t${i}`);
    }
    expect(mountPathOf('/ipos/x', '/y')).toBe('');
    expect(isOpenApiPath(OPENAPI_PATH)).toBe(true);
    expect(isOpenApiPath('/-/openapi.json//')).toBe(false);
    expect(isOpenApiPath('/openapi.json')).toBe(false);
  });

  it('needs no key and counts against no window; other methods 405; over maxUrlLength 414; off: 404', async () => {
    const on = createIpoHandler(store, { now: () => new Date(FIXTURE_NOW), openapi: true, limits: {}, maxUrlLength: 100 });
    for (let i = 0; i < 10; i++) {
      for (const key of [undefined, keys.wrong, keys.revoked, keys.paid]) {
        const res = await on(request('/ipos/-/openapi.json', '/-/openapi.json', i % 2 === 0 ? 'GET' : 'HEAD', key));
        expect(res.status).toBe(200);
        expect(res.headers['RateLimit-Limit']).toBeUndefined();
      }
    }
    const list = await on(request('/ipos?status=open', '/'));
    expect(list.status).toBe(200);
    expect(list.headers['RateLimit-Remaining']).toBe('5');
    const post = await on(request('/ipos/-/openapi.json', '/-/openapi.json', 'POST'));
    expect([post.status, post.headers['Allow']]).toEqual([405, 'GET, HEAD']);
    const long = `/ipos/-/openapi.json?${'x'.repeat(100)}`;
    expect((await on(request(long, '/-/openapi.json'))).status).toBe(414);
    for (const options of [{}, { openapi: false }]) {
      const off = createIpoHandler(store, { now: () => new Date(FIXTURE_NOW), limits: {}, ...options });
      for (const method of ['GET', 'HEAD', 'POST']) {
        const res = await off(request('/ipos/-/openapi.json', '/-/openapi.json', method));
        expect(res.status).toBe(404);
        expect(JSON.parse(res.body)).toMatchObject({ code: 'ERR:NOTFOUND' });
      }
    }
    expect(() => createIpoHandler(store, { openapi: 'yes' as unknown as boolean })).toThrow(/openapi must be a boolean/);
  });
});

// ---------------------------------------------------------------------------------------
// Property: every response of the handler validates against the document

type KeyName = keyof FixtureKeys | 'none' | 'empty';

interface GeneratedCall {
  method: string;
  route: 'list' | 'ipo' | 'gmp' | 'subscription' | 'openapi' | 'unknown';
  identifier: string;
  trailing: boolean;
  params: Array<[string, string | null]>;
  key: KeyName;
  pad: boolean;
  failure: 'none' | 'store' | 'clock';
  advanceMs: number;
}

const VALUES = [
  'open', 'LISTED', 'closed', 'upcoming', 'announced', 'bogus', '', 'EQ', 'eq,sme', 'EQ,,SME', 'DEBT,EQ,EQ', 'nse', 'BSE', 'x',
  '2026-11-20', '2026-02-30', '2026-2-3', '0000-01-15', '9999-12-31', '2026', '02026', '1', '0', '007', '-1', '1.5', '1e2',
  '999999999999999999999', '1000000000', '1000000001', 'true', 'FALSE', 'yes', '%', '%E0%A4', 'a+b', '5m', 'WEEKLY', 'hourly',
  'median', 'MODE', 'avg', '2026-11-01', '2026-10-01', '2025-01-01', 'orb', 'ORBIT', '%25', 'x'.repeat(64), 'x'.repeat(65),
];
const NAMES = ['status', 'type', 'source', 'startDate', 'endDate', 'year', 'page', 'limit', 'includeGmp', 'interval', 'field', 'from', 'to', 'q', 'foo'];
const IDENTIFIERS = ['ORBIT', 'orbit', '2026000001', 'orbit-aerospace-ipo', '2026000004', 'NOPE', '%E0%A4', 'a%2Fb', '-', 'openapi.json', 'x'.repeat(140), 'R%26D'];

const callArb: fc.Arbitrary<GeneratedCall> = fc.record({
  method: fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS'),
  route: fc.constantFrom('list', 'list', 'ipo', 'gmp', 'gmp', 'subscription', 'subscription', 'openapi', 'unknown'),
  identifier: fc.constantFrom(...IDENTIFIERS),
  trailing: fc.boolean(),
  params: fc.array(fc.tuple(fc.constantFrom(...NAMES), fc.option(fc.constantFrom(...VALUES), { nil: null })), { maxLength: 6 }),
  key: fc.constantFrom<KeyName>('none', 'empty', 'free', 'paid', 'pro', 'proGmp', 'proGmp', 'revoked', 'wrong'),
  pad: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  failure: fc.constantFrom<GeneratedCall['failure']>('none', 'none', 'none', 'none', 'none', 'none', 'none', 'none', 'store', 'clock'),
  advanceMs: fc.oneof({ weight: 20, arbitrary: fc.nat(500) }, { weight: 1, arbitrary: fc.constantFrom(20_000, 60_000) }),
});

const MAX_URL = 600;

describe('every response of the handler validates against the OpenAPI document (property)', () => {
  let keys: FixtureKeys;
  let validator: OpenApiValidator;
  let handlers: { strict: IpoHandler; generous: IpoHandler; broken: IpoHandler };
  const clock = { now: FIXTURE_NOW };
  const failing = { store: false };

  beforeAll(async () => {
    const store = referenceStore();
    keys = (await seedFixture(store)).keys;
    validator = await openApiValidator();
    // a store that fails (503) while `failing.store` is set
    const faulty = new Proxy(store, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]): unknown => (failing.store ? Promise.reject(new Error('store down')) : Reflect.apply(value as (...a: unknown[]) => unknown, target, args));
      },
    });
    const now = (): Date => new Date(clock.now);
    const quiet = (): void => undefined;
    handlers = {
      strict: createIpoHandler(faulty, { now, onError: quiet, openapi: true, maxUrlLength: MAX_URL, limits: {} }),
      generous: createIpoHandler(faulty, {
        now,
        onError: quiet,
        maxUrlLength: MAX_URL,
        limits: { free: { perMinute: Infinity, gmpPerMinute: Infinity }, paid: { perMinute: 1e9 }, pro: { perMinute: Infinity, gmpPerMinute: 1e9 }, keyless: { perMinute: Infinity } },
      }),
      broken: createIpoHandler(faulty, {
        now: () => {
          throw new Error('clock broke');
        },
        onError: quiet,
        openapi: true,
      }),
    };
  });

  /** Sends one request to the handler, validates the response, and returns its status. */
  const checkOne = async (handle: IpoHandler, req: HandlerRequest, mount: string): Promise<number> => {
    const res: HandlerResponse = await handle(req);
    const headers = Object.fromEntries(Object.entries(res.headers).map(([n, v]) => [n.toLowerCase(), v]));
    // Node sends no body to HEAD (the adapters hand it the GET body)
    const body = req.method === 'HEAD' ? '' : res.body;
    const problems = validator.check({ method: req.method, path: req.path, mount, status: res.status, headers, body });
    expect(problems, `${req.method} ${req.url} (key ${String(req.headers['x-api-key'])})`).toEqual([]);
    return res.status;
  };

  it('for generated requests of the four routes, valid and invalid, with every key, 429s, 503s and 500s', async () => {
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(callArb, fc.boolean(), async (c, generous) => {
        clock.now += c.advanceMs;
        const path =
          c.route === 'list' ? '/' :
          c.route === 'ipo' ? `/${c.identifier}` :
          c.route === 'gmp' ? `/${c.identifier}/gmp` :
          c.route === 'subscription' ? `/${c.identifier}/subscription` :
          c.route === 'openapi' ? OPENAPI_PATH : `/${c.identifier}/x`;
        const below = c.trailing && path !== '/' ? `${path}/` : path;
        let query = c.params.map(([n, v]) => (v === null ? n : `${n}=${v}`)).join('&');
        if (c.pad) query += `&pad=${'p'.repeat(MAX_URL)}`;
        const key = c.key === 'none' ? undefined : c.key === 'empty' ? '' : keys[c.key];
        const req: HandlerRequest = {
          method: c.method,
          url: `/ipos${below}${query === '' ? '' : `?${query}`}`,
          path: below,
          query,
          headers: key === undefined ? {} : { 'x-api-key': key },
          clientAddress: '198.51.100.4',
        };
        failing.store = c.failure === 'store';
        try {
          const handle = c.failure === 'clock' ? handlers.broken : generous ? handlers.generous : handlers.strict;
          seen.add(await checkOne(handle, req, '/ipos'));
        } finally {
          failing.store = false;
        }
      }),
      { numRuns: 400 },
    );
    // Bursts at one instant, so that every window refuses whatever the run generated: the
    // keyless list, a 401 charged to the address, an account's window, its GMP window.
    const burst: Array<[string, string, KeyName]> = [
      ['/', 'status=open', 'none'],
      ['/ORBIT', '', 'wrong'],
      ['/ORBIT', '', 'paid'],
      ['/ORBIT/gmp', 'interval=hourly', 'proGmp'],
      ['/ORBIT/subscription', '', 'free'],
    ];
    for (const [path, query, who] of burst) {
      clock.now += 61_000;
      const key = who === 'none' || who === 'empty' ? undefined : keys[who];
      for (let i = 0; i < 8; i++) {
        const req: HandlerRequest = {
          method: i % 3 === 2 ? 'HEAD' : 'GET',
          url: `/ipos${path}${query === '' ? '' : `?${query}`}`,
          path,
          query,
          headers: key === undefined ? {} : { 'x-api-key': key },
          clientAddress: '198.51.100.77',
        };
        const status = await checkOne(handlers.strict, req, '/ipos');
        seen.add(status);
        if (i === 7) expect(status, `the 8th request to ${path} as ${who}`).toBe(429);
      }
    }
    // the run reached every status the document lists
    for (const status of [200, 400, 401, 403, 404, 405, 414, 429, 500, 503]) expect(seen, `status ${status} was generated`).toContain(status);
  });

  it("for the fuzzer's hostile requests (odd paths, encodings, keys, methods, mount letter case, absolute-form)", async () => {
    const mangle = (mount: string, bits: number): string => {
      let i = 0;
      return Array.from(mount, (ch) => (/[a-z]/i.test(ch) && (bits >> i++) & 1 ? (ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase()) : ch)).join('');
    };
    const keyText = (part: HeaderPart): string => {
      if (typeof part === 'string') return part;
      const k = keys[part.key];
      return part.transform === 'upper' ? k.toUpperCase() : part.transform === 'lower' ? k.toLowerCase() : part.transform === 'truncate' ? k.slice(0, -1) : k;
    };
    await fc.assert(
      fc.asyncProperty(fuzzRequestArbitrary(), fc.boolean(), async (r: FuzzRequest, generous) => {
        clock.now += r.advanceMs;
        const mount = mangle('/ipos', r.mountCase);
        const path = r.path === '' ? '/' : r.path;
        const origin = r.absoluteForm ? 'http://127.0.0.1:8080' : '';
        let query = r.query ?? '';
        if (r.padTo !== null) query += `${query === '' ? '' : '&'}pad=${'p'.repeat(Math.max(0, r.padTo - 40))}`;
        const lines = (r.apiKey?.lines ?? []).map((line) => line.map(keyText).join('').replace(/^[ \t]+|[ \t]+$/g, ''));
        const req: HandlerRequest = {
          method: r.method,
          url: `${origin}${mount}${r.path}${r.query === null && r.padTo === null ? '' : `?${query}`}`,
          path,
          query,
          headers: lines.length === 0 ? {} : { 'x-api-key': lines.join(', ') },
          clientAddress: '203.0.113.9',
        };
        await checkOne(generous ? handlers.generous : handlers.strict, req, mount);
      }),
      { numRuns: 300 },
    );
  });
});

describe('openApiValidator', () => {
  let validator: OpenApiValidator;
  const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'private, no-store' };
  const RATE = { 'ratelimit-limit': '6', 'ratelimit-remaining': '5', 'ratelimit-reset': '60' };
  let handle: IpoHandler;
  let keys: FixtureKeys;
  beforeAll(async () => {
    const store = referenceStore();
    keys = (await seedFixture(store)).keys;
    handle = createIpoHandler(store, { now: () => new Date(FIXTURE_NOW), limits: {}, openapi: true });
    validator = await openApiValidator();
  });
  const exchange = async (path: string, query: string, key?: string, method = 'GET') => {
    const res = await handle({ method, url: `/ipos${path}${query === '' ? '' : `?${query}`}`, path, query, headers: key === undefined ? {} : { 'x-api-key': key }, clientAddress: '192.0.2.99' });
    const headers = Object.fromEntries(Object.entries(res.headers).map(([n, v]) => [n.toLowerCase(), v]));
    return { method, path, mount: '/ipos', status: res.status, headers, body: method === 'HEAD' ? '' : res.body };
  };

  it('accepts real answers, the expanded-year meta.from of a range before year 0 included', async () => {
    const early = await exchange('/ORBIT/gmp', 'to=0000-01-15', keys.proGmp);
    expect(JSON.parse(early.body)).toMatchObject({ series: [], meta: { from: '-000001-12-16T00:00:00.000Z', to: '0000-01-15T23:59:59.999Z' } });
    expect(validator.check(early)).toEqual([]);
    const full = await exchange('/ORBIT', 'includeGmp=true', keys.proGmp);
    expect(JSON.parse(full.body)).toMatchObject({ ipo: { gmp: { aggregations: expect.any(Object) } } });
    expect(validator.check(full)).toEqual([]);
    const served = await exchange(OPENAPI_PATH, '');
    expect(validator.check(served)).toEqual([]);
    expect(validator.check({ ...served, mount: '/elsewhere' })).toEqual([expect.stringContaining('is not openApiDocument({ serverUrl: "/elsewhere" })')]);
  });

  it('reports, readably, every kind of drift', async () => {
    const ipo = await exchange('/ORBIT', '', keys.paid);
    const body = JSON.parse(ipo.body) as { ipo: Record<string, unknown> };
    const mutated = (change: (ipo: Record<string, unknown>) => void): string => {
      const copy = structuredClone(body);
      change(copy.ipo);
      return JSON.stringify(copy);
    };
    const cases: Array<[string, Parameters<OpenApiValidator['check']>[0], RegExp]> = [
      ['an extra key', { ...ipo, body: mutated((i) => (i['extra'] = 1)) }, /must NOT have additional properties.*extra/],
      ['a missing key', { ...ipo, body: mutated((i) => delete i['lotSize']) }, /must have required property 'lotSize'/],
      ['undefined instead of null', { ...ipo, body: mutated((i) => delete i['logo']) }, /required property 'logo'/],
      ['a wrong enumeration', { ...ipo, body: mutated((i) => (i['status'] = 'Open')) }, /body\/ipo\/status must be equal to one of the allowed values/],
      ['isSme out of step with type', { ...ipo, body: mutated((i) => (i['isSme'] = true)) }, /isSme must be equal to constant/],
      ['bse before nse', { ...ipo, body: mutated((i) => (i['exchanges'] = ['bse', 'nse'])) }, /exchanges must NOT be valid/],
      ['an impossible date', { ...ipo, body: mutated((i) => (i['startDate'] = '2026-02-30')) }, /startDate must match format "date"/],
      ['a status not listed', { ...ipo, method: 'GET', path: '/', status: 404 }, /answered 404, a status the OpenAPI document does not list for listIpos/],
      ['a 405 to GET', { ...ipo, status: 405 }, /never for GET or HEAD/],
      ['a HEAD body', { ...ipo, method: 'HEAD' }, /with a body to HEAD/],
      ['a header not documented', { ...ipo, status: 405, method: 'POST', headers: { ...JSON_HEADERS, ...RATE, allow: 'GET, HEAD' }, body: JSON.stringify({ status: '405', title: 'Method Not Allowed', detail: 'x', code: 'ERR:METHOD' }) }, /header ratelimit-limit, which the OpenAPI document does not give/],
      ['a required header missing', { ...ipo, status: 429, headers: { ...JSON_HEADERS, ...RATE }, body: JSON.stringify({ status: '429', title: 'Too Many Requests', detail: 'x', code: 'ERR:RATELIMIT', meta: { quotaPerMinute: 6, expiresIn: 3 } }) }, /without the header Retry-After/],
      ['a header that is no integer', { ...ipo, headers: { ...ipo.headers, 'ratelimit-remaining': '5.0' } }, /RateLimit-Remaining: "5.0", not an integer/],
      ['a wrong error code', { ...ipo, status: 404, body: JSON.stringify({ status: '404', title: 'Not Found', detail: 'x', code: 'ERR:PLAN' }) }, /body\/code must be equal to constant/],
      ['meta on a 404', { ...ipo, status: 404, body: JSON.stringify({ status: '404', title: 'Not Found', detail: 'x', code: 'ERR:NOTFOUND', meta: { parameter: 'x' } }) }, /must NOT be valid/],
      ['a 400 naming a parameter the route does not have', { ...ipo, status: 400, body: JSON.stringify({ status: '400', title: 'Bad Request', detail: 'x', code: 'ERR:BADPARAM', meta: { parameter: 'status' } }) }, /meta\/parameter must be equal to one of the allowed values/],
      ['a 400 without meta', { ...ipo, status: 400, body: JSON.stringify({ status: '400', title: 'Bad Request', detail: 'x', code: 'ERR:BADPARAM' }) }, /required property 'meta'/],
      ['an unknown path answering 200', { ...ipo, path: '/a/b/c' }, /\/a\/b\/c is no path of the OpenAPI document/],
      ['text instead of JSON', { ...ipo, headers: { ...ipo.headers, 'content-type': 'text/plain' } }, /content-type "text\/plain", not one the OpenAPI document lists/],
    ];
    for (const [what, x, message] of cases) {
      const problems = validator.check(x);
      expect(problems.join('\n'), what).toMatch(message);
    }
  });
});
