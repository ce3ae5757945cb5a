/**
 * Strict parsing of every parameter of the three operations (docs/spec.md#list, #one-ipo, #gmp-series). Each
 * parser throws `IpokitError('ERR:BADPARAM')` naming the first invalid parameter, in the
 * order the interface lists them.
 */
import { asciiLower } from '../model/ascii.js';
import { dateToEpochMs } from '../model/dates.js';
import { badParam } from '../model/errors.js';
import { MAX_Q_LENGTH } from '../model/ipo-fields.js';
import { decodeComponent, decodeQueryComponent } from './request.js';
import { EXCHANGES, GMP_FIELDS, GMP_INTERVALS, IPO_TYPES, STATUS_VALUES, type Exchange, type GmpField, type GmpInterval, type IpoStatus, type IpoType } from '../model/types.js';

/** The largest `page` accepted. */
export const MAX_PAGE = 1_000_000_000;
/** `limit` when none is asked for. */
export const DEFAULT_LIST_LIMIT = 3;


/** Validated parameters of `GET /ipos`. */
export interface ListParams {
  status: IpoStatus;
  types: IpoType[] | null;
  source: Exchange | null;
  startDate: string | null;
  endDate: string | null;
  year: string | null;
  /** Text the name or symbol contains, ASCII case ignored; null: no such filter. */
  q: string | null;
  page: number;
  /** As asked for (Infinity for a number too large to write down), before plan clamping. */
  limit: number;
  includeGmp: boolean;
}

/** Validated parameters of `GET /ipos/{identifier}/gmp` (range not yet resolved). */
export interface GmpParams {
  identifier: string;
  interval: GmpInterval;
  field: GmpField;
  from: string | null;
  to: string | null;
}

/**
 * Parses the list parameters. `status` is required; see docs/spec.md#list for every rule.
 *
 * @example
 * ```ts
 * parseListParams(parseQuery('status=LISTED&type=eq,sme')).types; // ['EQ', 'SME']
 * ```
 */
export function parseListParams(query: Map<string, string[]>): ListParams {
  const status = one(query, 'status');
  if (status === null) throw badParam('status', 'status is required: use one of open, upcoming, listed, closed, announced.');
  const statusValue = enumValue('status', status, STATUS_VALUES);
  const typeText = one(query, 'type');
  let types: IpoType[] | null = null;
  if (typeText !== null) {
    const items = typeText.split(',');
    types = [];
    for (const item of items) {
      if (item === '') throw badParam('type', `type must be a comma-separated list of EQ, SME, DEBT without empty items; got ${quote(typeText)}.`);
      const folded = asciiLower(item);
      const t = IPO_TYPES.find((x) => asciiLower(x) === folded);
      if (t === undefined) throw badParam('type', `type must be a comma-separated list of EQ, SME, DEBT; got ${quote(typeText)}.`);
      if (!types.includes(t)) types.push(t);
    }
  }
  const sourceText = one(query, 'source');
  const source = sourceText === null ? null : enumValue('source', sourceText, EXCHANGES);
  const startDate = dateParam(query, 'startDate');
  const endDate = dateParam(query, 'endDate');
  const year = one(query, 'year');
  if (year !== null && !/^[0-9]{4}$/.test(year)) throw badParam('year', `year must be four digits, e.g. 2024; got ${quote(year)}.`);
  const q = one(query, 'q');
  if (q !== null && codePoints(q) > MAX_Q_LENGTH) throw badParam('q', `q must be at most ${MAX_Q_LENGTH} characters; got ${codePoints(q)}.`);
  const pageText = one(query, 'page');
  const page = pageText === null ? 1 : wholeNumber('page', pageText);
  if (page < 1 || page > MAX_PAGE) {
    throw badParam('page', `page must be a whole number from 1 to ${MAX_PAGE}; got ${quote(pageText ?? '')}.`);
  }
  const limitText = one(query, 'limit');
  const limit = limitText === null ? DEFAULT_LIST_LIMIT : wholeNumber('limit', limitText);
  if (limit < 1) throw badParam('limit', `limit must be a whole number of at least 1; got ${quote(limitText ?? '')}.`);
  return {
    status: statusValue,
    types,
    source,
    startDate,
    endDate,
    year,
    q,
    page,
    limit,
    includeGmp: includeGmpParam(query),
  };
}

/**
 * Parses the one-IPO parameters: the identifier (percent-decoded once), then includeGmp.
 *
 * @example
 * ```ts
 * parseIpoParams('a%2Fb', parseQuery('')); // { identifier: 'a/b', includeGmp: false }
 * ```
 */
export function parseIpoParams(rawIdentifier: string, query: Map<string, string[]>): { identifier: string; includeGmp: boolean } {
  return { identifier: identifierParam(rawIdentifier), includeGmp: includeGmpParam(query) };
}

/**
 * Parses the GMP series parameters in the contract's order: identifier, interval, field,
 * from, to. The range itself is resolved by `resolveGmpRange`.
 *
 * @example
 * ```ts
 * parseGmpParams('ORBIT', parseQuery('interval=HOURLY')).interval; // 'hourly'
 * ```
 */
export function parseGmpParams(rawIdentifier: string, query: Map<string, string[]>): GmpParams {
  // Each parameter is read and checked whole before the next (the first invalid one in
  // interface order is the one a 400 names).
  const identifier = identifierParam(rawIdentifier);
  const rawInterval = one(query, 'interval');
  const interval = rawInterval === null ? 'daily' : enumValue('interval', rawInterval, GMP_INTERVALS);
  const rawField = one(query, 'field');
  const field = rawField === null ? 'mean' : enumValue('field', rawField, GMP_FIELDS);
  const from = dateParam(query, 'from');
  const to = dateParam(query, 'to');
  return { identifier, interval, field, from, to };
}

/** Validated parameters of `GET /ipos/{identifier}/subscription` (range not yet resolved). */
export interface SubscriptionParams {
  identifier: string;
  from: string | null;
  to: string | null;
}

/**
 * Parses the subscription series parameters in the contract's order: identifier, from, to.
 * The range itself is resolved by `resolveSubscriptionRange`.
 *
 * @example
 * ```ts
 * parseSubscriptionParams('ORBIT', parseQuery('from=2026-11-17')); // { identifier: 'ORBIT', from: '2026-11-17', to: null }
 * ```
 */
export function parseSubscriptionParams(rawIdentifier: string, query: Map<string, string[]>): SubscriptionParams {
  const identifier = identifierParam(rawIdentifier);
  const from = dateParam(query, 'from');
  const to = dateParam(query, 'to');
  return { identifier, from, to };
}

/** The length of a text in code points (a surrogate pair is one character). */
function codePoints(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

/**
 * The single decoded value of a parameter, or null when absent. A repeated parameter,
 * an empty value or a malformed encoding is a 400 naming it.
 *
 * @example
 * ```ts
 * one(parseQuery('a=1'), 'a'); // '1'
 * ```
 */
export function one(query: Map<string, string[]>, name: string): string | null {
  const values = query.get(name);
  if (values === undefined) return null;
  if (values.length > 1) throw badParam(name, `${name} may be given only once.`);
  const value = decodeQueryComponent(values[0] as string);
  if (value === null) throw badParam(name, `${name} has a malformed percent-encoding.`);
  if (value === '') throw badParam(name, `${name} must not be empty.`);
  return value;
}

function identifierParam(raw: string): string {
  const identifier = decodeComponent(raw);
  if (identifier === null) throw badParam('identifier', 'The identifier in the path has a malformed percent-encoding.');
  return identifier;
}

function includeGmpParam(query: Map<string, string[]>): boolean {
  const value = one(query, 'includeGmp');
  if (value === null) return false;
  const lower = asciiLower(value);
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  throw badParam('includeGmp', `includeGmp must be true or false; got ${quote(value)}.`);
}

function dateParam(query: Map<string, string[]>, name: string): string | null {
  const value = one(query, name);
  if (value === null) return null;
  if (dateToEpochMs(value) === null) throw badParam(name, `${name} must be a real calendar date written YYYY-MM-DD; got ${quote(value)}.`);
  return value;
}

function enumValue<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  const lower = asciiLower(value);
  const found = allowed.find((a) => asciiLower(a) === lower);
  if (found === undefined) throw badParam(name, `${name} must be one of ${allowed.join(', ')}; got ${quote(value)}.`);
  return found;
}

/** Plain digits compared exactly however long; too large to matter becomes Infinity. */
function wholeNumber(name: string, text: string): number {
  if (!/^[0-9]+$/.test(text)) throw badParam(name, `${name} must be a whole number written in digits; got ${quote(text)}.`);
  const digits = text.replace(/^0+(?=.)/, '');
  return digits.length > 15 ? Infinity : Number(digits);
}

/**
 * A parameter value quoted for an error detail, cut to 50 characters (code points).
 *
 * @example
 * ```ts
 * quote('abc'); // '"abc"'
 * ```
 */
export function quote(value: string): string {
  const chars = Array.from(value);
  return JSON.stringify(chars.length > 50 ? `${chars.slice(0, 50).join('')}...` : value);
}

