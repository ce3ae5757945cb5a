/**
 * The OpenAPI 3.1 document of the four routes (docs/spec.md): every parameter, every
 * response body and error body, the `x-api-key` scheme and the rate-limit headers,
 * exactly as the handler answers them. The HTTP conformance suite validates every
 * response it receives against this document (with a JSON Schema 2020-12 validator), so
 * the document cannot drift from the code.
 *
 * The IPO object's schema, its limits and patterns come from the one definition of the IPO
 * fields (model/ipo-fields.ts), which the dataset checker enforces. Other values are written
 * out here rather than imported from the code that produces them (bounds of parameters, the
 * keyless message): a change on either side is then a validation failure instead of a silent
 * change of the document.
 */
import { IpokitError, KEYLESS_INFO } from '../model/errors.js';
import { RATE_LIMIT_HEADERS, type RateLimitHeaders } from '../model/options.js';
import { EXCHANGES, GMP_FIELDS, GMP_INTERVALS, IPO_TYPES, RATE_WINDOWS, STATUS_VALUES, SUBSCRIPTION_CATEGORIES } from '../model/types.js';
import { DATE_PATTERN, ID_PATTERN, IPO_SCHEMA, MAX_Q_LENGTH, MAX_TEXT_LENGTH, PRICE_LIMIT, SYMBOL_PATTERN } from '../model/ipo-fields.js';

// ---------------------------------------------------------------------------------------
// Types: the subset of OpenAPI 3.1 and JSON Schema 2020-12 this document uses

/** A JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A JSON Schema type name. */
export type JsonSchemaType = 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object';

/** A JSON Schema (dialect 2020-12), with the keywords the document uses. */
export interface JsonSchema {
  $ref?: string;
  title?: string;
  description?: string;
  type?: JsonSchemaType | JsonSchemaType[];
  enum?: JsonValue[];
  const?: JsonValue;
  default?: JsonValue;
  examples?: JsonValue[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  allOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  not?: JsonSchema;
  if?: JsonSchema;
  then?: JsonSchema;
  else?: JsonSchema;
}

/** A `$ref` to another part of the document, e.g. `#/components/headers/Allow`. */
export interface OpenApiReference {
  $ref: string;
}

/** A parameter of an operation (query or path). */
export interface OpenApiParameter {
  name: string;
  in: 'query' | 'path';
  description: string;
  required: boolean;
  schema: JsonSchema;
  /** Only on `type`, a comma-separated list: `form` without explode. */
  style?: 'form' | 'simple';
  explode?: boolean;
}

/** A response header. */
export interface OpenApiHeader {
  description: string;
  required: boolean;
  schema: JsonSchema;
}

/** A response body of one media type. */
export interface OpenApiMediaType {
  schema: JsonSchema;
}

/** One response of an operation. HEAD operations have no `content`. */
export interface OpenApiResponse {
  description: string;
  headers: Record<string, OpenApiHeader | OpenApiReference>;
  content?: Record<string, OpenApiMediaType>;
}

/** A security requirement: scheme name -> scopes (none for an API key); `{}` means none needed. */
export type OpenApiSecurityRequirement = Record<string, string[]>;

/** One operation (GET or HEAD of a path). */
export interface OpenApiOperation {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  parameters: Array<OpenApiParameter | OpenApiReference>;
  security: OpenApiSecurityRequirement[];
  /** HTTP status as a string (`'200'`, `'404'`) -> response. */
  responses: Record<string, OpenApiResponse>;
}

/** A path of the API: its GET and HEAD operations (every other method is answered 405). */
export interface OpenApiPathItem {
  summary: string;
  description: string;
  parameters?: Array<OpenApiParameter | OpenApiReference>;
  get: OpenApiOperation;
  head: OpenApiOperation;
}

/** The `x-api-key` scheme. */
export interface OpenApiApiKeyScheme {
  type: 'apiKey';
  in: 'header';
  name: string;
  description: string;
}

/** The OpenAPI document {@link openApiDocument} returns: plain JSON data. */
export interface OpenApiDocument {
  openapi: '3.1.0';
  jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema';
  info: {
    title: string;
    version: string;
    summary: string;
    description: string;
    license: { name: string; identifier: string };
  };
  servers: Array<{ url: string; description: string }>;
  tags: Array<{ name: string; description: string }>;
  security: OpenApiSecurityRequirement[];
  paths: {
    '/': OpenApiPathItem;
    '/{identifier}': OpenApiPathItem;
    '/{identifier}/gmp': OpenApiPathItem;
    '/{identifier}/subscription': OpenApiPathItem;
  };
  components: {
    schemas: Record<string, JsonSchema>;
    parameters: Record<string, OpenApiParameter>;
    headers: Record<string, OpenApiHeader>;
    securitySchemes: { apiKey: OpenApiApiKeyScheme };
  };
}

/** Options of {@link openApiDocument}. */
export interface OpenApiDocumentOptions {
  /**
   * The URL the router is mounted at, written into `servers`: a path (`/ipos`, resolved
   * against where the document was fetched) or an absolute URL. Default `'/ipos'`.
   */
  serverUrl?: string;
  /**
   * The router's `rateLimitHeaders`: which `RateLimit` headers the responses are documented
   * with. Default `'draft-6'`.
   */
  rateLimitHeaders?: RateLimitHeaders;
}

/** Where the document is served when the `openapi` option is on, below the mount. */
export const OPENAPI_PATH = '/-/openapi.json';

/**
 * The OpenAPI 3.1.0 document of the API (JSON Schema dialect 2020-12), as a fresh plain
 * JSON object: `JSON.stringify` it to serve or save it. It describes GET and HEAD of `/`,
 * `/{identifier}`, `/{identifier}/gmp` and `/{identifier}/subscription` below the mount, every parameter, every response
 * body and header, and the `x-api-key` scheme, exactly as this version of the routers
 * answers (the HTTP conformance suite validates every response against it).
 *
 * @throws {IpokitError} `ERR:BADPARAM` when `serverUrl` is not a non-empty string.
 *
 * @example
 * ```ts
 * import { writeFileSync } from 'node:fs';
 * import { openApiDocument } from '@ipokit/core';
 *
 * writeFileSync('openapi.json', JSON.stringify(openApiDocument({ serverUrl: 'https://api.example.com/ipos' }), null, 2));
 * ```
 */
export function openApiDocument(options: OpenApiDocumentOptions = {}): OpenApiDocument {
  const serverUrl = options.serverUrl === undefined ? '/ipos' : options.serverUrl;
  if (typeof serverUrl !== 'string' || serverUrl === '') {
    throw new IpokitError('ERR:BADPARAM', 'openApiDocument option serverUrl must be a non-empty string, e.g. "/ipos".', { parameter: 'serverUrl' });
  }
  const mode = options.rateLimitHeaders ?? 'draft-6';
  if (!RATE_LIMIT_HEADERS.includes(mode)) {
    throw new IpokitError('ERR:BADPARAM', `openApiDocument option rateLimitHeaders must be one of ${RATE_LIMIT_HEADERS.map((h) => `'${h}'`).join(', ')}.`, { parameter: 'rateLimitHeaders' });
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'ipokit IPO API',
      version: DOCUMENT_VERSION,
      summary: 'Indian IPOs (mainboard EQ, SME, DEBT on NSE/BSE) and their Grey Market Premium (GMP) timeseries.',
      description: INFO_DESCRIPTION,
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: serverUrl, description: 'The path (or URL) the router is mounted at.' }],
    tags: [
      { name: 'IPOs', description: 'The list of IPOs and one IPO.' },
      { name: 'GMP', description: 'The Grey Market Premium series of one IPO.' },
      { name: 'Subscription', description: 'The subscription of one IPO by investor category, as the exchanges published it.' },
    ],
    security: [{ apiKey: [] }],
    paths: {
      '/': pathItem(LIST_ROUTE, mode),
      '/{identifier}': pathItem(IPO_ROUTE, mode),
      '/{identifier}/gmp': pathItem(GMP_ROUTE, mode),
      '/{identifier}/subscription': pathItem(SUBSCRIPTION_ROUTE, mode),
    },
    components: {
      schemas: schemas(),
      parameters: componentParameters(),
      headers: componentHeaders(),
      securitySchemes: {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'x-api-key',
          description:
            'An API key: `ipk_` followed by 32 base62 characters. An absent or empty header is no key; two headers arrive joined as `a, b`, which is not a valid key. A key sent but unknown or revoked is a 401 on every route, the list included.',
        },
      },
    },
  };
}

// ---------------------------------------------------------------------------------------
// Constants (written out on purpose: see the file comment)

/** The version of `@ipokit/core` whose behaviour the document describes. */
const DOCUMENT_VERSION = '0.1.0';

const STATUSES = [...STATUS_VALUES];
const TYPES = [...IPO_TYPES];
const EXCHANGE_VALUES = [...EXCHANGES];
const INTERVALS = [...GMP_INTERVALS];
const FIELDS = [...GMP_FIELDS];
const CATEGORIES = [...SUBSCRIPTION_CATEGORIES];
const WINDOW_NAMES = `(${RATE_WINDOWS.join('|')})`;
const POLICY_ITEM = `"${WINDOW_NAMES}";q=[0-9]+;w=[0-9]+`;
const MAX_PAGE = 1_000_000_000;
/** GMP prices are below 10,000,000 rupees in magnitude. */
const MAX_GMP = 10_000_000;

const INSTANT_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$';
/** An instant as `Date#toISOString` prints it, the expanded-year form (`-000001-...`) included. */
const ANY_INSTANT_PATTERN = '^([0-9]{4}|[+-][0-9]{6})-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$';

const JSON_MEDIA = 'application/json';

const INFO_DESCRIPTION = [
  'A read-only REST/JSON API about Indian IPOs, served by `@ipokit/express` or `@ipokit/koa` under a mount path of the app (the `servers` URL).',
  '',
  '- Every response is `application/json; charset=utf-8` with `Cache-Control: private, no-store`; HEAD answers exactly as GET would, without a body.',
  '- JSON is compact, with the keys in the order the schemas list them; an unknown value is `null`, never omitted; lists are `[]`.',
  '- Query parameters are read from the request as sent: split on `&`, name and value at the first `=`, `+` is a space, both percent-decoded once (a malformed encoding is a 400 naming the parameter). Names are case-sensitive. A listed parameter given twice, or with an empty value, is a 400; parameters a route does not list are ignored.',
  '- The path below the mount is split on `/`, each segment percent-decoded once; one trailing slash is tolerated; an empty segment or any other path is a 404. Every method other than GET and HEAD is a 405.',
  '- Steps, the first failing one answering: 414 (request-target over `maxUrlLength` bytes), 404 (unknown path), 405 (method), 401 (key), 429 (rate limit), 400 (parameters, in the order listed), 403 (plan), 404 (lookup).',
  '- Rate limits are counted per account (all of its keys), or per client address without a valid key: a `minute` window (60 s, sliding), an `hour` window (3,600 s, sliding) and a `day` window (the IST calendar day, from 00:00 IST), each on when its quota is finite; the GMP route also draws on the account\'s `gmp-minute` and `gmp-day` windows. Responses from the key step on carry the rate-limit headers of the router\'s `rateLimitHeaders` setting (draft 6: `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`; draft 11: `RateLimit-Policy` and `RateLimit`) for the window closest to refusing; none when every window the request draws on is off, when the limiter failed open, and on a 503.',
].join('\n');

// ---------------------------------------------------------------------------------------
// Routes

interface RouteSpec {
  /** Path of the document. */
  path: '/' | '/{identifier}' | '/{identifier}/gmp' | '/{identifier}/subscription';
  operationId: string;
  tag: string;
  summary: string;
  description: string;
  keyRequired: boolean;
  pathParameters: Array<OpenApiParameter | OpenApiReference>;
  queryParameters: Array<OpenApiParameter | OpenApiReference>;
  /** Parameters a 400 may name, in the order they are checked. */
  badParameters: string[];
  okDescription: string;
  okSchema: string;
  /** The 403 of the route; null when it answers none. */
  forbidden: string | null;
  /** The 404 of the lookup; null when the route answers no 404. */
  notFound: string | null;
}

const ref = (kind: string, name: string): OpenApiReference => ({ $ref: `#/components/${kind}/${name}` });
const schemaRef = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

const LIST_ROUTE: RouteSpec = {
  path: '/',
  operationId: 'listIpos',
  tag: 'IPOs',
  summary: 'List IPOs of one status: filtered, in a stable order, paginated',
  description: [
    'The IPOs whose status (derived from their dates and today in Asia/Kolkata) is `status` and that match every filter given (combined with AND), in this order:',
    'upcoming and open by startDate ascending, then id; announced by name (code-point order), then id; closed by endDate descending (startDate where endDate is null), then id; listed by listingDate descending, then id.',
    '',
    'The effective limit is `min(limit, plan maximum)` (free 1, paid 100, pro 100 by default; the `maxListLimit` option) and `meta.limit` reports it, so `totalPages = ceil(count / limit)` (0 when count is 0). A page past the end is a 200 with `ipos: []`.',
    '',
    'Without a key (an absent or empty `x-api-key`) parameters are still checked, `includeGmp=true` is a 403, and otherwise the answer is a partial page: `limit` 1 and `page` 1 whatever was asked, and `meta.info`. `meta.info` is absent on keyed responses.',
  ].join('\n'),
  keyRequired: false,
  pathParameters: [],
  queryParameters: [
    ref('parameters', 'status'),
    ref('parameters', 'type'),
    ref('parameters', 'source'),
    ref('parameters', 'startDate'),
    ref('parameters', 'endDate'),
    ref('parameters', 'year'),
    ref('parameters', 'q'),
    ref('parameters', 'page'),
    ref('parameters', 'limit'),
    ref('parameters', 'includeGmp'),
  ],
  badParameters: ['status', 'type', 'source', 'startDate', 'endDate', 'year', 'q', 'page', 'limit', 'includeGmp'],
  okDescription: 'One page of IPOs, with the list metadata.',
  okSchema: 'ListResponse',
  forbidden: '`includeGmp=true` without the pro plan with the GMP add-on (a keyless list included). Code `ERR:PLAN`.',
  notFound: null,
};

const IPO_ROUTE: RouteSpec = {
  path: '/{identifier}',
  operationId: 'getIpo',
  tag: 'IPOs',
  summary: 'One IPO, by id, symbol or slug',
  description:
    'The IPO whose id equals the identifier exactly, else the one whose symbol equals it ignoring ASCII case, else the one whose slug does. A key is required.',
  keyRequired: true,
  pathParameters: [ref('parameters', 'identifier')],
  queryParameters: [ref('parameters', 'includeGmp')],
  badParameters: ['identifier', 'includeGmp'],
  okDescription: 'The IPO.',
  okSchema: 'IpoResponse',
  forbidden: '`includeGmp=true` without the pro plan with the GMP add-on. Code `ERR:PLAN`.',
  notFound: 'No IPO has this identifier. Code `ERR:NOTFOUND`.',
};

const GMP_ROUTE: RouteSpec = {
  path: '/{identifier}/gmp',
  operationId: 'getGmpSeries',
  tag: 'GMP',
  summary: 'The GMP series of one IPO, bucketed and aggregated',
  description: [
    'Buckets of `interval`, aligned in UTC (5m to hourly on multiples of the interval since the Unix epoch, daily at 00:00Z, weekly at Monday 00:00Z). A point exists for each bucket holding at least one snapshot in the range that is not after now; its price is the mean, over the bucket\'s snapshots, of the `field` aggregation (each already rounded to 2 decimals), ignoring nulls, rounded half away from zero to 2 decimals; `null` when every value is null. Points ascend by timestamp; no data in range is a 200 with `series: []`.',
    '',
    'Range: from 00:00:00.000Z of `from` to 23:59:59.999Z of `to`. With neither, the 30 days ending now; with only `to`, from 30 days before `to`; with only `from`, up to now. A start after the end is a 400 naming `from`; a range of more than `maxGmpBuckets` buckets (default 20,000) is a 400 naming `interval`.',
    '',
    'A key is required. After the free preview (through the IST day `gmpPreviewEnds`, default 2026-09-30) the series needs the pro plan with the GMP add-on. The route also draws on the account\'s GMP window (default 3 per minute).',
  ].join('\n'),
  keyRequired: true,
  pathParameters: [ref('parameters', 'identifier')],
  queryParameters: [ref('parameters', 'interval'), ref('parameters', 'field'), ref('parameters', 'from'), ref('parameters', 'to')],
  badParameters: ['identifier', 'interval', 'field', 'from', 'to'],
  okDescription: 'The series.',
  okSchema: 'GmpSeries',
  forbidden: 'The free GMP preview has ended and the key\'s plan is not pro with the GMP add-on. Code `ERR:PLAN`.',
  notFound: 'No IPO has this identifier. Code `ERR:NOTFOUND`.',
};

const SUBSCRIPTION_ROUTE: RouteSpec = {
  path: '/{identifier}/subscription',
  operationId: 'getSubscriptionSeries',
  tag: 'Subscription',
  summary: 'Every subscription snapshot of one IPO, by investor category',
  description: [
    'Every subscription snapshot of the IPO whose timestamp is in the range and not after now, ascending, not bucketed (a few dozen per IPO). Each point gives the times subscribed per investor category (`null` for a category the issue does not have or the source did not give). No data in range is a 200 with `series: []`.',
    '',
    'Range: from 00:00:00.000Z of `from` to 23:59:59.999Z of `to`. Without `from` it starts at 2000-01-01T00:00:00.000Z (the earliest instant a dataset may hold), also with only `to`; without `to` it ends now. `meta.from` and `meta.to` show the effective range. A start after the end is a 400 naming `from`.',
    '',
    'A key of any plan is required. The route draws on the main windows (minute, hour, day), not the GMP ones; usage counts it as route `subscription`.',
  ].join('\n'),
  keyRequired: true,
  pathParameters: [ref('parameters', 'identifier')],
  queryParameters: [ref('parameters', 'subscriptionFrom'), ref('parameters', 'subscriptionTo')],
  badParameters: ['identifier', 'from', 'to'],
  okDescription: 'The series.',
  okSchema: 'SubscriptionSeries',
  forbidden: null,
  notFound: 'No IPO has this identifier. Code `ERR:NOTFOUND`.',
};

function pathItem(route: RouteSpec, mode: RateLimitHeaders): OpenApiPathItem {
  const get = operation(route, mode);
  const head: OpenApiOperation = {
    ...get,
    operationId: `${route.operationId}Head`,
    summary: `${route.summary} (headers only)`,
    description: 'Answers exactly as GET would (status and headers, the rate-limit windows charged alike), without a body.',
    responses: Object.fromEntries(Object.entries(get.responses).map(([status, r]) => [status, { description: r.description, headers: r.headers }])),
  };
  const item: OpenApiPathItem = {
    summary: route.summary,
    description: 'Answers GET and HEAD; any other method is a 405 with `Allow: GET, HEAD` (listed among the responses of both operations, since OpenAPI has no operation for "any other method").',
    get,
    head,
  };
  if (route.pathParameters.length > 0) item.parameters = route.pathParameters;
  return item;
}

function operation(route: RouteSpec, mode: RateLimitHeaders): OpenApiOperation {
  const keyed: OpenApiSecurityRequirement[] = route.keyRequired ? [{ apiKey: [] }] : [{ apiKey: [] }, {}];
  const responses: Record<string, OpenApiResponse> = {
    '200': {
      description: route.okDescription,
      headers: { 'Cache-Control': ref('headers', 'CacheControl'), ...rateHeaders(false, mode) },
      content: { [JSON_MEDIA]: { schema: schemaRef(route.okSchema) } },
    },
    '400': errorResponse(
      'A parameter is missing or invalid (the first one in the order listed, the identifier first); `meta.parameter` names it. Code `ERR:BADPARAM`.',
      {
        allOf: [
          schemaRef('BadRequestError'),
          { type: 'object', properties: { meta: { type: 'object', properties: { parameter: { type: 'string', enum: route.badParameters } } } } },
        ],
      },
      'optional',
      mode,
    ),
    '401': errorResponse(
      route.keyRequired
        ? 'No key, or a key that is not valid or has been revoked. Code `ERR:INVLDKEY`. Charged to the client address\'s window (a 429 when it is full).'
        : 'A key that is sent but not valid or revoked (no key is a partial 200). Code `ERR:INVLDKEY`. Charged to the client address\'s window (a 429 when it is full).',
      schemaRef('UnauthorizedError'),
      'optional',
      mode,
    ),
  };
  if (route.forbidden !== null) responses['403'] = errorResponse(route.forbidden, schemaRef('ForbiddenError'), 'optional', mode);
  if (route.notFound !== null) responses['404'] = errorResponse(route.notFound, schemaRef('NotFoundError'), 'optional', mode);
  responses['405'] = errorResponse(
    'Any method other than GET or HEAD on this path (never GET or HEAD themselves), with `Allow: GET, HEAD`. Code `ERR:METHOD`. No window counts it.',
    schemaRef('MethodNotAllowedError'),
    'none',
    mode,
    true,
  );
  responses['414'] = errorResponse(
    'The request-target (mount path and query included) is longer than `maxUrlLength` bytes (default 4,096). Code `ERR:URITOOLONG`. No window counts it.',
    schemaRef('UriTooLongError'),
    'none',
    mode,
  );
  responses['429'] = errorResponse(
    'A rate-limit window is full. `meta` and the headers describe the refusing window (the one with the longest wait; ties go to a GMP window, then to the longer window); `Retry-After` equals `meta.expiresIn`. Code `ERR:RATELIMIT`.',
    schemaRef('TooManyRequestsError'),
    'required',
    mode,
  );
  responses['500'] = errorResponse('A defect in the library, reported to the `onError` option and never detailed. Code `ERR:INTERNAL`.', schemaRef('InternalError'), 'none', mode);
  responses['503'] = errorResponse(
    'The store failed or took longer than `storeTimeoutMs` (default 5,000 ms), or it could not count hits and `limiterFailOpen` is false. Code `ERR:UNAVAILABLE`. The request may have been charged.',
    schemaRef('UnavailableError'),
    'none',
    mode,
  );
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: route.description,
    tags: [route.tag],
    parameters: route.queryParameters,
    security: keyed,
    responses,
  };
}

function errorResponse(description: string, schema: JsonSchema, rate: 'none' | 'optional' | 'required', mode: RateLimitHeaders, allow = false): OpenApiResponse {
  const headers: Record<string, OpenApiHeader | OpenApiReference> = { 'Cache-Control': ref('headers', 'CacheControl') };
  if (allow) headers['Allow'] = ref('headers', 'Allow');
  if (rate !== 'none') Object.assign(headers, rateHeaders(rate === 'required', mode));
  return { description, headers, content: { [JSON_MEDIA]: { schema } } };
}

/**
 * The `RateLimit` headers of `mode` (and Retry-After on a 429): optional where a window may
 * be off or the limiter failed open, required on a 429 (which describes the refusing window).
 */
function rateHeaders(refused: boolean, mode: RateLimitHeaders): Record<string, OpenApiHeader | OpenApiReference> {
  const h = componentHeaders();
  const headers: Record<string, OpenApiHeader | OpenApiReference> = {};
  const add = (name: string, component: string): void => {
    const header = h[component];
    if (header === undefined) throw new Error('missing component header');
    headers[name] = refused ? { ...header, required: true, description: `${header.description} On a 429: of the refusing window.` } : ref('headers', component);
  };
  if (mode === 'draft-6' || mode === 'both') {
    add('RateLimit-Limit', 'RateLimitLimit');
    add('RateLimit-Remaining', 'RateLimitRemaining');
    add('RateLimit-Reset', 'RateLimitReset');
  }
  if (mode === 'draft-11' || mode === 'both') {
    add('RateLimit-Policy', 'RateLimitPolicy');
    add('RateLimit', 'RateLimit');
  }
  if (refused) headers['Retry-After'] = ref('headers', 'RetryAfter');
  return headers;
}

// ---------------------------------------------------------------------------------------
// Components

function componentParameters(): Record<string, OpenApiParameter> {
  const dateSchema = (): JsonSchema => ({ type: 'string', format: 'date', pattern: DATE_PATTERN, examples: ['2026-11-20'] });
  const casing = 'Matched ignoring case in ASCII only: A-Z match a-z and no other character folds (the canonical form is shown).';
  return {
    identifier: {
      name: 'identifier',
      in: 'path',
      required: true,
      description:
        'An IPO id, symbol or slug, percent-decoded once (`a%2Fb` is `a/b`; a malformed encoding is a 400 naming `identifier`). Resolution: id exactly, then symbol, then slug, both ignoring ASCII case only. An identifier always starts with a letter or digit.',
      schema: { type: 'string', minLength: 1, examples: ['2026000001', 'ORBIT', 'orbit-aerospace-ipo'] },
    },
    status: {
      name: 'status',
      in: 'query',
      required: true,
      description: `The derived status to list (listed, closed, open, upcoming, announced: from the dates and today in Asia/Kolkata). ${casing}`,
      schema: { type: 'string', enum: STATUSES },
    },
    type: {
      name: 'type',
      in: 'query',
      required: false,
      style: 'form',
      explode: false,
      description: `Comma-separated IPO types to keep, e.g. \`EQ,SME\`. Items are matched ignoring case in ASCII only (A-Z match a-z; no other character folds) and repeats are ignored; an empty item (\`EQ,,SME\`) is a 400.`,
      schema: { type: 'array', items: { type: 'string', enum: TYPES }, minItems: 1, maxItems: 3, uniqueItems: true },
    },
    source: {
      name: 'source',
      in: 'query',
      required: false,
      description: `Keep IPOs whose \`exchanges\` holds this exchange. ${casing}`,
      schema: { type: 'string', enum: EXCHANGE_VALUES },
    },
    startDate: {
      name: 'startDate',
      in: 'query',
      required: false,
      description: 'Keep IPOs with `startDate` on or after this real calendar date (`YYYY-MM-DD`; `2026-02-30` and `2026-2-3` are a 400). IPOs without a startDate do not match.',
      schema: dateSchema(),
    },
    endDate: {
      name: 'endDate',
      in: 'query',
      required: false,
      description:
        'Keep IPOs with `endDate` on or before this real calendar date (inclusive). IPOs without an endDate do not match. A startDate after endDate is not an error: nothing matches.',
      schema: dateSchema(),
    },
    year: {
      name: 'year',
      in: 'query',
      required: false,
      description: 'Keep IPOs whose startDate falls in this year: exactly four digits (announced IPOs never match).',
      schema: { type: 'string', pattern: '^[0-9]{4}$', examples: ['2026'] },
    },
    q: {
      name: 'q',
      in: 'query',
      required: false,
      description:
        'Keep IPOs whose name or symbol contains this text, ASCII letter case ignored (no other folding: `É` does not match `é`). 1 to 64 characters (code points), taken as sent: no trimming, and `%`, `_` and `\\` are literal. Combined with the other filters; the order is unchanged.',
      schema: { type: 'string', minLength: 1, maxLength: MAX_Q_LENGTH, examples: ['orbit'] },
    },
    page: {
      name: 'page',
      in: 'query',
      required: false,
      description:
        'The page, from 1. Plain digits (leading zeros are accepted; signs, spaces, decimals and exponents are a 400), compared exactly however long. A keyless list is always page 1.',
      schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 1 },
    },
    limit: {
      name: 'limit',
      in: 'query',
      required: false,
      description:
        'IPOs per page. Plain digits as for `page`; any value of 1 or more is accepted, however long, and clamped to the plan maximum (free 1, paid 100, pro 100 by default; the `maxListLimit` option) without an error or a warning: `meta.info` is for the keyless answer only, so compare `meta.limit`, the effective limit, with the limit asked (a free key asking 10 gets 1 per page, so 10 times the pages). A keyless list is always limit 1.',
      schema: { type: 'integer', minimum: 1, default: 3 },
    },
    includeGmp: {
      name: 'includeGmp',
      in: 'query',
      required: false,
      description: `\`true\` adds each IPO's latest GMP snapshot as \`gmp\` (null when it has none yet); needs the pro plan with the GMP add-on (else a 403). ${casing}`,
      schema: { type: 'boolean', default: false },
    },
    interval: {
      name: 'interval',
      in: 'query',
      required: false,
      description: `Bucket size. ${casing} The body echoes the canonical value.`,
      schema: { type: 'string', enum: INTERVALS, default: 'daily' },
    },
    field: {
      name: 'field',
      in: 'query',
      required: false,
      description: `The snapshot aggregation averaged per bucket. ${casing} The body echoes the canonical value.`,
      schema: { type: 'string', enum: FIELDS, default: 'mean' },
    },
    from: {
      name: 'from',
      in: 'query',
      required: false,
      description: 'Start of the range, a real calendar date: 00:00:00.000Z of that day. Default: 30 days before the end.',
      schema: dateSchema(),
    },
    to: {
      name: 'to',
      in: 'query',
      required: false,
      description: 'End of the range, a real calendar date: 23:59:59.999Z of that day (the whole day is included). Default: now.',
      schema: dateSchema(),
    },
    subscriptionFrom: {
      name: 'from',
      in: 'query',
      required: false,
      description: 'Start of the range, a real calendar date: 00:00:00.000Z of that day. Default: 2000-01-01T00:00:00.000Z.',
      schema: dateSchema(),
    },
    subscriptionTo: {
      name: 'to',
      in: 'query',
      required: false,
      description: 'End of the range, a real calendar date: 23:59:59.999Z of that day (the whole day is included). Default: now.',
      schema: dateSchema(),
    },
  };
}

function componentHeaders(): Record<string, OpenApiHeader> {
  return {
    CacheControl: {
      description: 'Every response: answers depend on the key and the clock.',
      required: true,
      schema: { type: 'string', const: 'private, no-store' },
    },
    Allow: {
      description: 'The methods the path answers.',
      required: true,
      schema: { type: 'string', const: 'GET, HEAD' },
    },
    RateLimitLimit: {
      description: 'The quota of the window closest to refusing (the fewest remaining; ties go to a GMP window, then to the longer window). Absent when no window counts the request.',
      required: false,
      schema: { type: 'integer', minimum: 1 },
    },
    RateLimitRemaining: {
      description: 'Requests that window still admits, after this one.',
      required: false,
      schema: { type: 'integer', minimum: 0 },
    },
    RateLimitReset: {
      description: 'Whole seconds, rounded up, until the oldest hit of that window leaves it (a day window: until 00:00 IST).',
      required: false,
      schema: { type: 'integer', minimum: 0 },
    },
    RateLimitPolicy: {
      description: 'draft-11: every window the request draws on, in the order minute, hour, day, gmp-minute, gmp-day, as `"name";q=<quota>;w=<seconds>`, comma separated.',
      required: false,
      schema: { type: 'string', pattern: `^${POLICY_ITEM}(, ${POLICY_ITEM})*$` },
    },
    RateLimit: {
      description: 'draft-11: the window closest to refusing (as RateLimit-Limit chooses it), `"name";r=<remaining after this request>;t=<whole seconds until its oldest hit leaves>`.',
      required: false,
      schema: { type: 'string', pattern: `^"${WINDOW_NAMES}";r=[0-9]+;t=[0-9]+$` },
    },
    RetryAfter: {
      description: 'Whole seconds until a request would be admitted; equals `meta.expiresIn`.',
      required: true,
      schema: { type: 'integer', minimum: 1 },
    },
  };
}

function schemas(): Record<string, JsonSchema> {
  const text = (description: string): JsonSchema => ({ type: 'string', minLength: 1, maxLength: MAX_TEXT_LENGTH, description });
  const gmpNumber = (description: string, nullable: boolean): JsonSchema => ({
    type: nullable ? ['number', 'null'] : 'number',
    exclusiveMinimum: -MAX_GMP,
    exclusiveMaximum: MAX_GMP,
    description,
  });
  const price = (description: string): JsonSchema => ({ type: 'number', minimum: 0, exclusiveMaximum: PRICE_LIMIT, description });
  const count = (description: string): JsonSchema => ({ type: 'integer', minimum: 0, description });
  const timesNumber = (description: string): JsonSchema => ({ type: ['number', 'null'], minimum: 0, exclusiveMaximum: PRICE_LIMIT, description });
  const errorFor = (status: string, title: string, code: string, meta: 'parameter' | 'rate' | 'none'): JsonSchema => {
    const properties: Record<string, JsonSchema> = {
      status: { type: 'string', const: status },
      title: { type: 'string', const: title },
      code: { type: 'string', const: code },
    };
    const schema: JsonSchema = { type: 'object', allOf: [schemaRef('Error')], properties };
    if (meta === 'none') schema.not = { type: 'object', properties: { meta: {} }, required: ['meta'] };
    else {
      properties['meta'] = schemaRef(meta === 'parameter' ? 'ParameterMeta' : 'RateLimitMeta');
      schema.required = ['meta'];
    }
    return schema;
  };
  return {
    Ipo: {
      type: 'object',
      description:
        'An IPO. Keys in this order; an unknown value is `null` (never omitted), lists are `[]`. Text fields are as imported: 1 to 10,000 characters.',
      additionalProperties: false,
      // From the one definition of the fields (model/ipo-fields.ts), as plain JSON: TypeBox's
      // own (non-enumerable) keys stay behind.
      ...(JSON.parse(JSON.stringify({ required: IPO_SCHEMA.required, properties: IPO_SCHEMA.properties })) as Pick<JsonSchema, 'required' | 'properties'>),
      if: { type: 'object', properties: { type: { const: 'SME' } } },
      then: { type: 'object', properties: { isSme: { const: true } } },
      else: { type: 'object', properties: { isSme: { const: false } } },
    },
    ScheduleEvent: {
      type: 'object',
      additionalProperties: false,
      required: ['event', 'date'],
      properties: {
        event: text('What happens, e.g. `"Allotment"`.'),
        date: { type: 'string', format: 'date', pattern: DATE_PATTERN },
      },
    },
    PriceBand: {
      type: 'object',
      description: 'The price band in rupees: `priceRange` read as two numbers, exactly.',
      additionalProperties: false,
      required: ['low', 'high'],
      properties: {
        low: price('The low end of the band.'),
        high: price('The high end of the band (the issue price of a fixed-price issue).'),
      },
    },
    ListingPrice: {
      type: 'object',
      description: 'One exchange\'s prices on the listing day, in rupees with at most 2 decimals; low <= open <= high and low <= close <= high.',
      additionalProperties: false,
      required: ['exchange', 'open', 'high', 'low', 'close'],
      properties: {
        exchange: { type: 'string', enum: EXCHANGE_VALUES },
        open: price('The opening price.'),
        high: price('The day\'s high.'),
        low: price('The day\'s low.'),
        close: price('The closing price.'),
      },
    },
    GmpSnapshot: {
      type: 'object',
      description: 'The latest GMP snapshot whose timestamp is at or before now (later ones are invisible until their time).',
      additionalProperties: false,
      required: ['lastUpdatedAt', 'aggregations', 'estimatedListingPrice', 'gmpPercent', 'sources'],
      properties: {
        lastUpdatedAt: { type: 'string', format: 'date-time', pattern: INSTANT_PATTERN, description: 'The snapshot\'s timestamp, ISO-8601 UTC with milliseconds.' },
        aggregations: schemaRef('GmpAggregations'),
        estimatedListingPrice: {
          type: ['number', 'null'],
          description: '`priceBand.high` + `aggregations.mean`, in rupees; null when the IPO has no price band, its high is 0, or the mean is null.',
        },
        gmpPercent: {
          type: ['number', 'null'],
          description:
            '`aggregations.mean` / `priceBand.high` x 100, rounded once to 2 decimals half away from zero; null when the IPO has no price band, its high is 0, or the mean is null.',
        },
        sources: { type: 'array', items: schemaRef('GmpSource'), description: 'The sources that reported a number, ascending by name in code-point order.' },
      },
    },
    GmpAggregations: {
      type: 'object',
      description:
        'Across the snapshot\'s numeric sources, exact, rounded once half away from zero to 2 decimals; all null when no source reported a number. `median` of an even count is the mean of the two middle values; `mode` is the most frequent value, a tie going to the lowest.',
      additionalProperties: false,
      required: FIELDS,
      properties: Object.fromEntries(FIELDS.map((f) => [f, gmpNumber(`The ${f}, in rupees.`, true)])),
    },
    GmpSource: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'gmpPrice'],
      properties: {
        name: text('Source name.'),
        gmpPrice: gmpNumber('The premium it reported, in rupees with at most 2 decimals.', false),
      },
    },
    ListMeta: {
      type: 'object',
      description: 'Keys in this order. `info` only on the keyless partial response.',
      additionalProperties: false,
      required: ['count', 'countOnPage', 'totalPages', 'page', 'limit'],
      properties: {
        count: count('IPOs matching the query.'),
        countOnPage: count('IPOs on this page.'),
        totalPages: count('`ceil(count / limit)`.'),
        page: { type: 'integer', minimum: 1, maximum: MAX_PAGE, description: 'This page (1 on a keyless list).' },
        limit: { type: 'integer', minimum: 1, description: 'The effective limit: `min(limit asked, plan maximum)`; 1 on a keyless list.' },
        info: { type: 'string', const: KEYLESS_INFO, description: 'Only without a key.' },
      },
    },
    ListResponse: {
      type: 'object',
      additionalProperties: false,
      required: ['meta', 'ipos'],
      properties: {
        meta: schemaRef('ListMeta'),
        ipos: { type: 'array', items: schemaRef('Ipo') },
      },
    },
    IpoResponse: {
      type: 'object',
      additionalProperties: false,
      required: ['ipo'],
      properties: { ipo: schemaRef('Ipo') },
    },
    GmpSeries: {
      type: 'object',
      description: 'Keys in this order.',
      additionalProperties: false,
      required: ['ipoId', 'symbol', 'interval', 'field', 'series', 'meta'],
      properties: {
        ipoId: { type: 'string', pattern: ID_PATTERN, description: 'The IPO\'s canonical id.' },
        symbol: { type: ['string', 'null'], pattern: SYMBOL_PATTERN },
        interval: { type: 'string', enum: INTERVALS, description: 'The canonical (lowercase) interval used.' },
        field: { type: 'string', enum: FIELDS, description: 'The canonical aggregation used.' },
        series: { type: 'array', items: schemaRef('GmpPoint'), description: 'Ascending by timestamp.' },
        meta: {
          type: 'object',
          additionalProperties: false,
          required: ['from', 'to', 'count'],
          properties: {
            from: {
              type: 'string',
              pattern: ANY_INSTANT_PATTERN,
              description:
                'Effective start of the range, ISO-8601 UTC with milliseconds as `Date#toISOString` writes it: a range starting before year 0 (only `to`, in the first 30 days of year 0) uses the expanded-year form, e.g. `-000001-12-16T00:00:00.000Z`.',
            },
            to: { type: 'string', format: 'date-time', pattern: INSTANT_PATTERN, description: 'Effective end of the range.' },
            count: count('Points in `series`.'),
          },
        },
      },
    },
    GmpPoint: {
      type: 'object',
      additionalProperties: false,
      required: ['timestamp', 'price'],
      properties: {
        timestamp: { type: 'string', format: 'date-time', pattern: INSTANT_PATTERN, description: 'Start of the bucket.' },
        price: gmpNumber('The bucket\'s mean of the field, rounded to 2 decimals; null when every value was null.', true),
      },
    },
    SubscriptionTimes: {
      type: 'object',
      description:
        'Times subscribed per investor category, keys in this order: qualified institutional buyers, non-institutional investors (with the big and small NII parts), retail, employees, shareholders, and the issue as a whole. Each a number >= 0 with at most 2 decimals, or null for a category the issue does not have or the source did not give.',
      additionalProperties: false,
      required: CATEGORIES,
      properties: Object.fromEntries(CATEGORIES.map((c) => [c, timesNumber(`Times the ${c} portion was subscribed.`)])),
    },
    SubscriptionSnapshot: {
      type: 'object',
      description: 'The latest subscription snapshot whose timestamp is at or before now (later ones are invisible until their time).',
      additionalProperties: false,
      required: ['asOf', 'times'],
      properties: {
        asOf: { type: 'string', format: 'date-time', pattern: INSTANT_PATTERN, description: 'When the exchanges published it, ISO-8601 UTC with milliseconds.' },
        times: schemaRef('SubscriptionTimes'),
      },
    },
    SubscriptionSeries: {
      type: 'object',
      description: 'Keys in this order.',
      additionalProperties: false,
      required: ['ipoId', 'symbol', 'series', 'meta'],
      properties: {
        ipoId: { type: 'string', pattern: ID_PATTERN, description: 'The IPO\'s canonical id.' },
        symbol: { type: ['string', 'null'], pattern: SYMBOL_PATTERN },
        series: { type: 'array', items: schemaRef('SubscriptionPoint'), description: 'Every snapshot in range, ascending by timestamp.' },
        meta: {
          type: 'object',
          additionalProperties: false,
          required: ['from', 'to', 'count'],
          properties: {
            from: { type: 'string', format: 'date-time', pattern: INSTANT_PATTERN, description: 'Effective start of the range.' },
            to: { type: 'string', format: 'date-time', pattern: INSTANT_PATTERN, description: 'Effective end of the range (now when `to` was not given).' },
            count: count('Points in `series`.'),
          },
        },
      },
    },
    SubscriptionPoint: {
      type: 'object',
      description: 'One snapshot: its instant, then the times per category in the order of `SubscriptionTimes`.',
      additionalProperties: false,
      required: ['timestamp', ...CATEGORIES],
      properties: {
        timestamp: { type: 'string', format: 'date-time', pattern: INSTANT_PATTERN, description: 'When the exchanges published it.' },
        ...Object.fromEntries(CATEGORIES.map((c) => [c, timesNumber(`Times the ${c} portion was subscribed.`)])),
      },
    },
    Error: {
      type: 'object',
      description:
        'Every error body: keys in this order, `meta` only on a 400 and a 429. `title` is the reason phrase of the status; `detail` is one sentence saying what to change (it may quote a parameter value, cut to 50 characters, never the key).',
      additionalProperties: false,
      required: ['status', 'title', 'detail', 'code'],
      properties: {
        status: { type: 'string', pattern: '^[45][0-9]{2}$', description: 'The HTTP status, as a string.' },
        title: { type: 'string', minLength: 1 },
        detail: { type: 'string', minLength: 1 },
        code: {
          type: 'string',
          enum: ['ERR:BADPARAM', 'ERR:INVLDKEY', 'ERR:PLAN', 'ERR:NOTFOUND', 'ERR:METHOD', 'ERR:URITOOLONG', 'ERR:RATELIMIT', 'ERR:INTERNAL', 'ERR:UNAVAILABLE'],
        },
        meta: { oneOf: [schemaRef('ParameterMeta'), schemaRef('RateLimitMeta')] },
      },
    },
    ParameterMeta: {
      type: 'object',
      additionalProperties: false,
      required: ['parameter'],
      properties: { parameter: { type: 'string', description: 'The parameter at fault.' } },
    },
    RateLimitMeta: {
      type: 'object',
      description: 'The refusing window.',
      additionalProperties: false,
      required: ['quotaPerMinute', 'expiresIn', 'window', 'quota'],
      properties: {
        quotaPerMinute: { type: ['integer', 'null'], minimum: 1, description: "The per-minute quota of the refusing window's family (`gmpPerMinute` for a GMP window, else `perMinute`); null when that minute window is off. Kept for clients of the hosted service." },
        expiresIn: { type: 'integer', minimum: 1, description: 'Whole seconds, rounded up, until the next request would be admitted.' },
        window: { type: 'string', enum: [...RATE_WINDOWS], description: 'The refusing window.' },
        quota: { type: 'integer', minimum: 1, description: 'Its quota.' },
      },
    },
    BadRequestError: errorFor('400', 'Bad Request', 'ERR:BADPARAM', 'parameter'),
    UnauthorizedError: errorFor('401', 'Unauthorized', 'ERR:INVLDKEY', 'none'),
    ForbiddenError: errorFor('403', 'Forbidden', 'ERR:PLAN', 'none'),
    NotFoundError: errorFor('404', 'Not Found', 'ERR:NOTFOUND', 'none'),
    MethodNotAllowedError: errorFor('405', 'Method Not Allowed', 'ERR:METHOD', 'none'),
    UriTooLongError: errorFor('414', 'URI Too Long', 'ERR:URITOOLONG', 'none'),
    TooManyRequestsError: errorFor('429', 'Too Many Requests', 'ERR:RATELIMIT', 'rate'),
    InternalError: errorFor('500', 'Internal Server Error', 'ERR:INTERNAL', 'none'),
    UnavailableError: errorFor('503', 'Service Unavailable', 'ERR:UNAVAILABLE', 'none'),
  };
}
