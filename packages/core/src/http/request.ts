/**
 * Reading a request as it came (docs/spec.md#requests): the path below the mount and the raw query
 * string. The framework's parsed query and params are never used, so that every
 * framework gives the same answer.
 */
import { asciiLower } from '../model/ascii.js';
import { OPENAPI_PATH } from './openapi.js';

/** Which of the four operations a path names, or none. */
export type Route =
  | { kind: 'list' }
  | { kind: 'ipo'; rawIdentifier: string }
  | { kind: 'gmp'; rawIdentifier: string }
  | { kind: 'subscription'; rawIdentifier: string }
  | { kind: 'unknown' };

/**
 * Routes a path below the mount (`/`, `/ORBIT`, `/ORBIT/gmp`, `/ORBIT/subscription`; the
 * last segment matches exactly, after percent-decoding; one trailing slash is
 * tolerated; an empty segment is an unknown path). The identifier is returned as sent
 * (still percent-encoded): a malformed encoding is a parameter error, found later.
 *
 * @example
 * ```ts
 * routePath('/ORBIT/gmp/'); // { kind: 'gmp', rawIdentifier: 'ORBIT' }
 * ```
 */
export function routePath(path: string): Route {
  let p = path === '' ? '/' : path;
  if (p[0] !== '/') return { kind: 'unknown' };
  if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  if (p === '/') return { kind: 'list' };
  const segments = p.slice(1).split('/');
  if (segments.some((s) => s === '')) return { kind: 'unknown' };
  const first = segments[0] as string;
  if (segments.length === 1) return { kind: 'ipo', rawIdentifier: first };
  if (segments.length === 2) {
    const second = decodeComponent(segments[1] as string);
    if (second === 'gmp' || second === 'subscription') return { kind: second, rawIdentifier: first };
  }
  return { kind: 'unknown' };
}

/**
 * Tells whether a path below the mount names the OpenAPI document ({@link OPENAPI_PATH},
 * `/-/openapi.json`), read as {@link routePath} reads paths: each segment percent-decoded
 * once, one trailing slash tolerated. No identifier can start with `-`, so this path
 * shadows none; {@link routePath} itself calls it an unknown path (the handler serves it
 * only when the `openapi` option is on).
 *
 * @example
 * ```ts
 * isOpenApiPath('/-/openapi.json/'); // true
 * isOpenApiPath('/openapi.json');    // false: that is the identifier route
 * ```
 */
export function isOpenApiPath(path: string): boolean {
  const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  if (p === OPENAPI_PATH) return true;
  const segments = p.split('/');
  return (
    segments.length === 3 &&
    segments[0] === '' &&
    decodeComponent(segments[1] as string) === OPENAPI_SEGMENTS[0] &&
    decodeComponent(segments[2] as string) === OPENAPI_SEGMENTS[1]
  );
}

const OPENAPI_SEGMENTS = OPENAPI_PATH.slice(1).split('/') as [string, string];

/**
 * The mount path as a request reached it: its request-target (origin dropped when sent in
 * absolute-form, query dropped) without the path below the mount, e.g. `/ipos` for
 * `GET /ipos/-/openapi.json?x`; `''` when the router answers at the root, or when the
 * target does not end with the path (an adapter that rewrote it).
 *
 * @example
 * ```ts
 * mountPathOf('http://example.com/IPOS/-/openapi.json', '/-/openapi.json'); // '/IPOS'
 * ```
 */
export function mountPathOf(url: string, path: string): string {
  let target = originForm(url);
  const q = target.indexOf('?');
  if (q >= 0) target = target.slice(0, q);
  return path !== '' && target.endsWith(path) ? target.slice(0, target.length - path.length) : '';
}

/**
 * A request-target in origin-form: a target sent in absolute-form (`GET http://host/ipos/X`,
 * RFC 9112 3.2.2), which Node keeps as it is, without its `scheme://authority`; any other
 * target as it is.
 *
 * @example
 * ```ts
 * originForm('http://example.com/ipos/X?a=1'); // '/ipos/X?a=1'
 * originForm('/ipos/X'); // '/ipos/X'
 * ```
 */
export function originForm(target: string): string {
  return target.replace(ABSOLUTE_FORM, '');
}

const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/**
 * The raw query string split into parameters: name -> every raw value sent for it, in
 * order (`+` and percent-encoding not yet decoded). Names that cannot be decoded can
 * name no known parameter and are dropped.
 *
 * @example
 * ```ts
 * parseQuery('status=open&status=listed&x').get('status'); // ['open', 'listed']
 * ```
 */
export function parseQuery(query: string): Map<string, string[]> {
  const params = new Map<string, string[]>();
  if (query === '') return params;
  for (const part of query.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawName = eq < 0 ? part : part.slice(0, eq);
    const rawValue = eq < 0 ? '' : part.slice(eq + 1);
    const name = decodeQueryComponent(rawName);
    if (name === null) continue;
    const values = params.get(name);
    if (values === undefined) params.set(name, [rawValue]);
    else values.push(rawValue);
  }
  return params;
}

/**
 * Percent-decodes a query name or value once, `+` meaning a space; null when the encoding
 * is malformed (a lone `%`, or bytes that are not UTF-8).
 *
 * @example
 * ```ts
 * decodeQueryComponent('a+b%21'); // 'a b!'
 * ```
 */
export function decodeQueryComponent(raw: string): string | null {
  return decodeComponent(raw.includes('+') ? raw.replace(/\+/g, ' ') : raw);
}

/**
 * Percent-decodes a path segment once; null when the encoding is malformed.
 *
 * @example
 * ```ts
 * decodeComponent('a%2Fb'); // 'a/b'
 * ```
 */
export function decodeComponent(raw: string): string | null {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return null;
  }
}

/**
 * The window of every client address that is not an IPv4 or IPv6 address (and of a
 * request with no address at all): they all share it.
 */
export const UNKNOWN_ADDRESS = 'unknown';

/** Longer than any address with brackets, zone and port that a proxy plausibly sends. */
const MAX_ADDRESS_LENGTH = 100;

/**
 * Normalises a client address for rate limiting (docs/spec.md#limits): `::ffff:1.2.3.4` is
 * `1.2.3.4`, IPv6 addresses count by their /64 prefix, a zone index (`%eth0`) and a port
 * that a proxy appended (`1.2.3.4:5678`, `[2001:db8::1]:5678`) are dropped. Everything else
 * (a proxy passing on what a client wrote) is {@link UNKNOWN_ADDRESS}, one window shared by
 * all such values, so that no client picks its own window and the result is at most 24
 * characters long, whatever was sent.
 *
 * IPv4 is the dotted-quad of four decimal numbers 0-255 without leading zeros: the legacy
 * forms that some parsers accept (`010.0.0.1` read as octal, `3405803783` as one number,
 * `0xcb.0.113.7`) are not addresses here, and `203.000.113.007` is not `203.0.113.7`.
 *
 * @example
 * ```ts
 * normalizeClientAddress('2001:db8:1:2:aaaa::1'); // '2001:db8:1:2::/64'
 * normalizeClientAddress('203.0.113.7:49152');    // '203.0.113.7'
 * normalizeClientAddress('203.000.113.007');      // 'unknown'
 * ```
 */
export function normalizeClientAddress(address: string | undefined): string {
  if (address === undefined || address.length > MAX_ADDRESS_LENGTH) return UNKNOWN_ADDRESS;
  let a = address.trim();
  if (a.startsWith('[')) {
    // [v6] or [v6]:port
    const close = a.indexOf(']');
    if (close < 0) return UNKNOWN_ADDRESS;
    const rest = a.slice(close + 1);
    if (rest !== '' && !(rest[0] === ':' && isPort(rest.slice(1)))) return UNKNOWN_ADDRESS;
    a = a.slice(1, close);
    if (!a.includes(':')) return UNKNOWN_ADDRESS;
  } else if (!a.includes(':')) {
    return isIpv4(a) ? a : UNKNOWN_ADDRESS;
  } else {
    const colon = a.indexOf(':');
    if (colon === a.lastIndexOf(':') && a.includes('.')) {
      // a.b.c.d:port (one colon is never IPv6)
      return isIpv4(a.slice(0, colon)) && isPort(a.slice(colon + 1)) ? a.slice(0, colon) : UNKNOWN_ADDRESS;
    }
  }
  const zone = a.indexOf('%');
  if (zone >= 0) {
    // a zone index names an interface (`%eth0`): letters, digits, `.`, `-`, `:`, as Node's
    // own address check reads it; the address counts without it
    if (!ZONE.test(a.slice(zone))) return UNKNOWN_ADDRESS;
    a = a.slice(0, zone);
  }
  const g = expandIpv6(asciiLower(a));
  if (g === null) return UNKNOWN_ADDRESS;
  if (g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff) {
    const hi = g[6] as number;
    const lo = g[7] as number;
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return `${g.slice(0, 4).map((x) => x.toString(16)).join(':')}::/64`;
}

const IPV4 = /^(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])(?:\.(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])){3}$/;
const IPV4_TAIL = /(?:^|:)((?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])(?:\.(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])){3})$/;
const PORT = /^[0-9]{1,5}$/;
const ZONE = /^%[0-9A-Za-z.:-]+$/;

function isIpv4(text: string): boolean {
  return IPV4.test(text);
}

function isPort(text: string): boolean {
  return PORT.test(text) && Number(text) <= 65_535;
}

/** The eight 16-bit groups of an IPv6 address (a dotted-quad tail allowed), or null. */
function expandIpv6(address: string): number[] | null {
  let text = address;
  const v4 = IPV4_TAIL.exec(text);
  if (v4 !== null) {
    const b = (v4[1] as string).split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, text.length - (v4[1] as string).length)}${((b[0] << 8) | b[1]).toString(16)}:${((b[2] << 8) | b[3]).toString(16)}`;
  } else if (text.includes('.')) {
    return null;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = parseGroups(halves[0] as string);
  const tail = halves.length === 2 ? parseGroups(halves[1] as string) : [];
  if (head === null || tail === null) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  return [...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
}

function parseGroups(text: string): number[] | null {
  if (text === '') return [];
  const out: number[] = [];
  for (const group of text.split(':')) {
    if (!/^[0-9a-f]{1,4}$/.test(group)) return null;
    out.push(parseInt(group, 16));
  }
  return out;
}
