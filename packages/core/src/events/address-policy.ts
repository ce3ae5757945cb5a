/**
 * Which addresses a webhook may reach (docs/spec.md#webhooks, "Only the public internet"):
 * public unicast only. Endpoints are created by account holders, so a URL must never make the
 * worker reach the operator's own network: loopback, private, link-local, CGNAT, multicast and
 * the IPv6 forms that carry such an IPv4 address are refused unless the operator opens a
 * network with `webhookAllowedNetworks`. Hosts are read through the WHATWG URL parser, so every
 * spelling it accepts (`2130706433`, `0x7f000001`, `0177.0.0.1`, `127.1`, `[::ffff:7f00:1]`) is
 * checked as the address it means. Runtime-neutral: the DNS half (names checked on the address
 * actually connected to) is the Node transport's.
 */
import { IpokitError } from '../model/errors.js';

/** An IPv4 (32-bit) or IPv6 (128-bit) address as a number. */
interface Address {
  readonly v: 4 | 6;
  readonly n: bigint;
}

/** A network parsed from CIDR text: its first address and prefix length. */
export interface Network {
  readonly version: 4 | 6;
  readonly prefix: number;
  /** The network's first address, as text (`10.1.0.0`, `fd00::`). */
  readonly address: string;
  /** @internal The first address as a number. */
  readonly base: bigint;
}

/**
 * The parsed form of `webhookAllowedNetworks`: what {@link isAddressAllowed} and
 * {@link refusedHost} take besides the CIDR text itself (parse once where addresses are checked often).
 */
export interface AllowedNetworks {
  readonly networks: readonly Network[];
}

/** What can be passed as the allowed networks: CIDR texts, or their parsed form. */
export type AllowedNetworksInput = readonly string[] | AllowedNetworks | undefined;

/** The networks a webhook is never sent to unless allowed (docs/spec.md#webhooks), IPv4. */
export const REFUSED_IPV4_NETWORKS: readonly string[] = Object.freeze([
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '224.0.0.0/3',
]);

/** The networks a webhook is never sent to unless allowed (docs/spec.md#webhooks), IPv6; the IPv6 forms of a refused IPv4 address are refused too. */
export const REFUSED_IPV6_NETWORKS: readonly string[] = Object.freeze(['::/128', '::1/128', 'fc00::/7', 'fe80::/10', 'ff00::/8']);

const NO_NETWORKS: AllowedNetworks = Object.freeze({ networks: Object.freeze([]) });

/**
 * Parses one CIDR (`10.1.0.0/16`, `::1/128`; a bare address is that one address). A text
 * that is not one, a prefix out of range, or bits set past the prefix (`127.0.0.1/8`) throw
 * `ERR:BADPARAM` with parameter `webhookAllowedNetworks`.
 *
 * @example
 * ```ts
 * parseCidr('10.1.0.0/16'); // { version: 4, prefix: 16, address: '10.1.0.0', ... }
 * parseCidr('10.1.2.3/16'); // throws ERR:BADPARAM: did you mean 10.1.0.0/16?
 * ```
 */
export function parseCidr(text: string): Network {
  const shown = JSON.stringify(typeof text === 'string' ? text.slice(0, 60) : String(text));
  if (typeof text !== 'string') throw badNetwork(`${shown} is not a CIDR: write e.g. 10.1.0.0/16 or ::1/128.`);
  const slash = text.indexOf('/');
  const addressText = slash === -1 ? text : text.slice(0, slash);
  const address = parseAddress(addressText);
  if (address === null) throw badNetwork(`${shown} is not a CIDR: write e.g. 10.1.0.0/16 or ::1/128.`);
  const width = address.v === 4 ? 32 : 128;
  let prefix = width;
  if (slash !== -1) {
    const p = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(p) || Number(p) > width) throw badNetwork(`${shown}: the prefix length must be a whole number from 0 to ${width}.`);
    prefix = Number(p);
  }
  const base = maskOf(address.n, prefix, width);
  if (base !== address.n) throw badNetwork(`${shown} has bits set past its /${prefix}: did you mean ${formatAddress({ v: address.v, n: base })}/${prefix}?`);
  return Object.freeze({ version: address.v, prefix, address: formatAddress(address), base });
}

/**
 * Parses `webhookAllowedNetworks` once: a list of CIDRs (`['10.1.0.0/16']`), each checked as
 * {@link parseCidr} does. Anything else throws `ERR:BADPARAM` (parameter `webhookAllowedNetworks`).
 *
 * @example
 * ```ts
 * const allowed = parseAllowedNetworks(['127.0.0.0/8', '::1/128']);
 * isAddressAllowed('127.0.0.1', allowed); // true
 * ```
 */
export function parseAllowedNetworks(list: AllowedNetworksInput): AllowedNetworks {
  if (list === undefined) return NO_NETWORKS;
  if (isParsed(list)) return list;
  if (!Array.isArray(list)) throw badNetwork('webhookAllowedNetworks must be a list of CIDRs, e.g. ["10.1.0.0/16"].');
  return Object.freeze({ networks: Object.freeze((list as readonly string[]).map(parseCidr)) });
}

/**
 * Whether a webhook may be sent to an IP address (text as DNS or a URL gives it: `93.184.216.34`,
 * `2606:2800::1`, `::ffff:127.0.0.1`): public unicast, or inside one of the `allowed` networks.
 * An IPv6 address carrying an IPv4 one (IPv4-mapped, IPv4-compatible, 64:ff9b::/96) is also
 * judged as that IPv4 address. Text that is not an address is refused.
 *
 * @example
 * ```ts
 * isAddressAllowed('8.8.8.8'); // true
 * isAddressAllowed('::ffff:10.0.0.1'); // false
 * isAddressAllowed('10.1.2.3', ['10.1.0.0/16']); // true
 * ```
 */
export function isAddressAllowed(address: string, allowed?: AllowedNetworksInput): boolean {
  const parsed = parseAddress(address);
  return parsed !== null && addressAllowed(parsed, parseAllowedNetworks(allowed));
}

/**
 * Why a URL's host is refused before any lookup, or null when it may be tried: an IP literal
 * (any form the URL parser accepts) outside the public unicast range and the `allowed`
 * networks is `'address'`; `localhost` or a name under `.localhost` (always loopback) is
 * `'localhost'` unless the allowed networks hold 127.0.0.1 or ::1. Other names are null: they
 * are checked on the addresses they resolve to, at connection. A text that is not a URL is `'address'`.
 *
 * @example
 * ```ts
 * refusedHost('http://2130706433/'); // 'address'
 * refusedHost('http://localhost:8080/'); // 'localhost'
 * refusedHost('https://hooks.example.com/'); // null
 * refusedHost('http://127.0.0.1:8080/', ['127.0.0.0/8']); // null
 * ```
 */
export function refusedHost(url: string | URL, allowed?: AllowedNetworksInput): 'address' | 'localhost' | null {
  let hostname: string;
  try {
    hostname = (typeof url === 'string' ? new URL(url) : url).hostname;
  } catch {
    return 'address';
  }
  const networks = parseAllowedNetworks(allowed);
  const literal = hostLiteral(hostname);
  if (literal !== null) return addressAllowed(literal, networks) ? null : 'address';
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) {
    return addressAllowed(LOOPBACK_V4, networks) || addressAllowed(LOOPBACK_V6, networks) ? null : 'localhost';
  }
  return null;
}

/**
 * Whether a URL's host (as the URL parser gives it: `127.0.0.1`, `[::1]`, `example.com`) is
 * an IP literal rather than a name to resolve.
 *
 * @example
 * ```ts
 * isIpLiteral(new URL('http://0x7f000001/').hostname); // true ('127.0.0.1')
 * isIpLiteral('example.com'); // false
 * ```
 */
export function isIpLiteral(hostname: string): boolean {
  return hostLiteral(hostname) !== null;
}

const LOOPBACK_V4: Address = { v: 4, n: 0x7f000001n };
const LOOPBACK_V6: Address = { v: 6, n: 1n };

const REFUSED_V4 = REFUSED_IPV4_NETWORKS.map(parseCidr);
const REFUSED_V6 = REFUSED_IPV6_NETWORKS.map(parseCidr);
const MAPPED = parseCidr('::ffff:0:0/96');
const COMPATIBLE = parseCidr('::/96');
const NAT64 = parseCidr('64:ff9b::/96');

function addressAllowed(address: Address, allowed: AllowedNetworks): boolean {
  // The address and, for IPv6 forms that carry one, the IPv4 address it carries: a network
  // opened for either opens it; one refused for either refuses it.
  const forms = [address];
  if (address.v === 6 && (inNetwork(MAPPED, address) || inNetwork(COMPATIBLE, address) || inNetwork(NAT64, address))) {
    forms.push({ v: 4, n: address.n & 0xffffffffn });
  }
  if (forms.some((f) => allowed.networks.some((net) => inNetwork(net, f)))) return true;
  return !forms.some((f) => (f.v === 4 ? REFUSED_V4 : REFUSED_V6).some((net) => inNetwork(net, f)));
}

function inNetwork(net: Network, address: Address): boolean {
  if (net.version !== address.v) return false;
  const width = address.v === 4 ? 32 : 128;
  return maskOf(address.n, net.prefix, width) === net.base;
}

function maskOf(n: bigint, prefix: number, width: number): bigint {
  const hostBits = BigInt(width - prefix);
  return (n >> hostBits) << hostBits;
}

/** A URL parser's hostname as an address, when it is an IP literal (the parser has canonicalized it). */
function hostLiteral(hostname: string): Address | null {
  if (hostname.startsWith('[') && hostname.endsWith(']')) return parseIpv6(hostname.slice(1, -1));
  return parseDottedQuad(hostname);
}

/** Address text, in any form the URL parser accepts for a host (canonicalized by it first). */
function parseAddress(text: string): Address | null {
  // (only what an address is written with: a URL parser would read `a@127.0.0.1` as a host)
  if (typeof text !== 'string' || text.length === 0 || text.length > 100 || !/^[0-9a-fx.:]+$/i.test(text)) return null;
  try {
    if (text.includes(':')) {
      const host = new URL(`http://[${text}]/`).hostname;
      return parseIpv6(host.slice(1, -1));
    }
    return parseDottedQuad(new URL(`http://${text}/`).hostname);
  } catch {
    return null;
  }
}

function parseDottedQuad(text: string): Address | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (m === null) return null;
  let n = 0n;
  for (const part of m.slice(1)) {
    const byte = Number(part);
    if (byte > 255) return null;
    n = (n << 8n) | BigInt(byte);
  }
  return { v: 4, n };
}

/** IPv6 as the URL parser serializes it: lower-case hex groups, at most one `::`. */
function parseIpv6(text: string): Address | null {
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (s: string): string[] | null => {
    if (s === '') return [];
    const g = s.split(':');
    return g.every((x) => /^[0-9a-f]{1,4}$/i.test(x)) ? g : null;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (head === null || tail === null) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  let n = 0n;
  for (const g of [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail]) n = (n << 16n) | BigInt(parseInt(g, 16));
  return { v: 6, n };
}

function formatAddress(a: Address): string {
  if (a.v === 4) return [24n, 16n, 8n, 0n].map((s) => String((a.n >> s) & 0xffn)).join('.');
  const groups: string[] = [];
  for (let s = 112n; s >= 0n; s -= 16n) groups.push(((a.n >> s) & 0xffffn).toString(16));
  // (the URL parser's serialization: the longest run of zero groups, two or more, as ::)
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}

function isParsed(value: AllowedNetworksInput): value is AllowedNetworks {
  return value !== undefined && !Array.isArray(value) && typeof value === 'object' && Array.isArray((value as AllowedNetworks).networks);
}

function badNetwork(message: string): IpokitError {
  return new IpokitError('ERR:BADPARAM', message, { parameter: 'webhookAllowedNetworks' });
}
