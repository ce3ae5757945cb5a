import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isAddressAllowed, isIpLiteral, parseAllowedNetworks, parseCidr, refusedHost } from './address-policy.js';
import { IpokitError } from '../model/errors.js';

// The rules of docs/spec.md#webhooks, only the public internet, checked against a naive reference
// written on plain numbers (IPv4) and hex strings (IPv6), independent of the module's bigints.

/** [first, last] of each refused IPv4 network, as unsigned 32-bit numbers. */
const REFUSED_V4: Array<[number, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
].map(([a, p]) => {
  const first = v4Number(a as string);
  return [first, first + 2 ** (32 - (p as number)) - 1];
});

function v4Number(dotted: string): number {
  return dotted.split('.').reduce((n, b) => n * 256 + Number(b), 0);
}

function v4Refused(n: number): boolean {
  return REFUSED_V4.some(([a, b]) => n >= a && n <= b);
}

const bytes = (n: number): number[] => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
const dotted = (n: number): string => bytes(n).join('.');
const hex16 = (n: number): string => `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;

/** Every host spelling of an IPv4 address that a URL parser reads as that address. */
function v4Spellings(n: number): string[] {
  const [a, b, c, d] = bytes(n);
  return [
    dotted(n),
    String(n),
    `0x${n.toString(16)}`,
    `0x${n.toString(16).toUpperCase()}`,
    bytes(n).map((x) => `0${x.toString(8)}`).join('.'),
    `${a}.${(b! << 16) | (c! << 8) | d!}`,
    `${a}.${b}.${(c! << 8) | d!}`,
    `0x${a!.toString(16)}.${b}.0${c!.toString(8)}.${d}`,
    `${dotted(n)}.`,
    `[::ffff:${dotted(n)}]`,
    `[::ffff:${hex16(n)}]`,
    `[0:0:0:0:0:ffff:${hex16(n)}]`,
    `[::${dotted(n)}]`,
    `[64:ff9b::${dotted(n)}]`,
    `[64:ff9b::${hex16(n)}]`,
  ];
}

const v4 = fc.integer({ min: 0, max: 2 ** 32 - 1 });
const refusedV4 = fc.constantFrom(...REFUSED_V4).chain(([a, b]) => fc.integer({ min: a, max: b }));
const publicV4 = v4.filter((n) => !v4Refused(n));

describe('address policy (docs/spec.md#webhooks, only the public internet)', () => {
  it('refuses every address of a refused IPv4 network in every spelling a URL parser accepts', () => {
    fc.assert(
      fc.property(refusedV4, (n) => {
        for (const s of v4Spellings(n)) {
          expect(refusedHost(`http://${s}:8080/hook`), s).toBe('address');
          const bare = s.startsWith('[') ? s.slice(1, -1) : s.replace(/\.$/, '');
          expect(isAddressAllowed(bare), bare).toBe(false);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('allows every public IPv4 address in every spelling', () => {
    fc.assert(
      fc.property(publicV4, (n) => {
        for (const s of v4Spellings(n)) {
          expect(refusedHost(`https://${s}/hook`), s).toBeNull();
        }
        expect(isAddressAllowed(dotted(n))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('agrees with the reference on any IPv4 address', () => {
    fc.assert(fc.property(v4, (n) => isAddressAllowed(dotted(n)) === !v4Refused(n)));
  });

  it('refuses ::, ::1, fc00::/7, fe80::/10, ff00::/8 and allows other IPv6 unicast', () => {
    const group = fc.integer({ min: 0, max: 0xffff });
    const v6 = fc.array(group, { minLength: 8, maxLength: 8 });
    fc.assert(
      fc.property(v6, (g) => {
        const text = g.map((x) => x.toString(16)).join(':');
        const first = g[0]!;
        const embedded = g[6]! * 65536 + g[7]!;
        const prefix96 = (p: number[]): boolean => p.every((x, i) => g[i] === x);
        const carriesV4 = prefix96([0, 0, 0, 0, 0, 0xffff]) || prefix96([0, 0, 0, 0, 0, 0]) || prefix96([0x64, 0xff9b, 0, 0, 0, 0]);
        const refused = (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00 || (carriesV4 && v4Refused(embedded));
        expect(isAddressAllowed(text), text).toBe(!refused);
        expect(refusedHost(`https://[${text}]/`), text).toBe(refused ? 'address' : null);
      }),
      { numRuns: 2000 },
    );
    for (const a of ['::', '::1', 'fc00::1', 'fd00::1', 'fe80::1', 'febf::1', 'ff02::1', '0:0:0:0:0:0:0:1']) expect(isAddressAllowed(a), a).toBe(false);
    for (const a of ['2606:4700::1111', '2001:4860:4860::8888', 'fe00::1', 'fec0::1', '::ffff:8.8.8.8', '64:ff9b::808:808']) expect(isAddressAllowed(a), a).toBe(true);
  });

  it('opens exactly the allowed networks, and nothing outside them', () => {
    fc.assert(
      fc.property(refusedV4, fc.integer({ min: 0, max: 32 }), v4, (base, prefix, probe) => {
        const size = 2 ** (32 - prefix);
        const first = Math.floor(base / size) * size;
        const cidr = `${dotted(first)}/${prefix}`;
        const inside = probe >= first && probe < first + size;
        expect(isAddressAllowed(dotted(probe), [cidr]), `${dotted(probe)} in ${cidr}`).toBe(inside || !v4Refused(probe));
        // The IPv4-mapped form of an allowed address is the same address.
        expect(isAddressAllowed(`::ffff:${dotted(probe)}`, [cidr])).toBe(inside || !v4Refused(probe));
      }),
      { numRuns: 1000 },
    );
    const allowed = parseAllowedNetworks(['127.0.0.0/8', '::1/128']);
    expect(isAddressAllowed('127.5.6.7', allowed)).toBe(true);
    expect(isAddressAllowed('::1', allowed)).toBe(true);
    expect(isAddressAllowed('10.0.0.1', allowed)).toBe(false);
    expect(isAddressAllowed('::2', allowed)).toBe(false);
    expect(isAddressAllowed('fd00::1', ['fd00::/8'])).toBe(true);
    expect(isAddressAllowed('fc00::1', ['fd00::/8'])).toBe(false);
  });

  it('refuses localhost and names under .localhost at once, unless loopback is allowed; other names are left to the connection', () => {
    for (const host of ['localhost', 'LOCALHOST', 'localhost.', 'a.localhost', 'x.y.LocalHost.']) {
      expect(refusedHost(`http://${host}:9000/`), host).toBe('localhost');
      expect(refusedHost(`http://${host}:9000/`, ['127.0.0.0/8']), host).toBeNull();
      expect(refusedHost(`http://${host}:9000/`, ['::1/128']), host).toBeNull();
      expect(refusedHost(`http://${host}:9000/`, ['10.0.0.0/8']), host).toBe('localhost');
    }
    for (const host of ['example.com', 'metadata.google.internal', 'localhost.example.com', 'mylocalhost']) expect(refusedHost(`https://${host}/`), host).toBeNull();
    expect(isIpLiteral(new URL('http://0x7f000001/').hostname)).toBe(true);
    expect(isIpLiteral(new URL('http://[::1]/').hostname)).toBe(true);
    expect(isIpLiteral('example.com')).toBe(false);
  });

  it('parses CIDRs, and refuses a bad one with ERR:BADPARAM naming webhookAllowedNetworks', () => {
    expect(parseCidr('10.1.0.0/16')).toMatchObject({ version: 4, prefix: 16, address: '10.1.0.0' });
    expect(parseCidr('::1/128')).toMatchObject({ version: 6, prefix: 128, address: '::1' });
    expect(parseCidr('fd00::/8')).toMatchObject({ version: 6, prefix: 8, address: 'fd00::' });
    expect(parseCidr('192.168.1.7')).toMatchObject({ version: 4, prefix: 32, address: '192.168.1.7' });
    expect(parseCidr('0.0.0.0/0')).toMatchObject({ prefix: 0 });
    for (const bad of ['', '/8', '10.0.0.0/33', '10.0.0.0/-1', '10.0.0.0/8/8', '10.0.0.0/ 8', '::1/129', 'example.com/8', 'x@127.0.0.1/8', '10.0.0.256/32', '::1::/128', '10.0.0.0/08x']) {
      const thrown = catchError(() => parseCidr(bad));
      expect(thrown, bad).toBeInstanceOf(IpokitError);
      expect(thrown).toMatchObject({ code: 'ERR:BADPARAM', parameter: 'webhookAllowedNetworks' });
    }
    expect(catchError(() => parseCidr('127.0.0.1/8'))?.message).toMatch(/did you mean 127\.0\.0\.0\/8/);
    expect(catchError(() => parseAllowedNetworks('10.0.0.0/8' as unknown as string[]))).toMatchObject({ code: 'ERR:BADPARAM', parameter: 'webhookAllowedNetworks' });
    expect(catchError(() => parseAllowedNetworks([8 as unknown as string]))).toMatchObject({ code: 'ERR:BADPARAM', parameter: 'webhookAllowedNetworks' });
  });
});

function catchError(f: () => unknown): Error | undefined {
  try {
    f();
  } catch (err) {
    return err as Error;
  }
  return undefined;
}
