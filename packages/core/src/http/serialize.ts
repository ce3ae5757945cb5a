/**
 * The wire forms of responses (docs/spec.md#ipo-object, #errors): keys in the documented order, JSON
 * written compactly.
 */
import { WIRE_ERRORS, type WireErrorCode } from '../model/errors.js';
import { toGmpSnapshot } from '../model/gmp.js';
import { IPO_FIELDS, type IpoFieldName } from '../model/ipo-fields.js';
import { toIsoUtc } from '../model/dates.js';
import { paiseToRupees } from '../model/numbers.js';
import { gmpFigures, issueSizeCrore, priceBandPaise, toPriceBand } from '../model/prices.js';
import { subscriptionJson, toSubscriptionSnapshot } from '../model/subscription.js';
import { GMP_FIELDS, type ErrorBody, type Ipo, type IpoRecord, type IpoStatus, type SnapshotRecord, type SubscriptionRecord } from '../model/types.js';

/**
 * The IPO object of the wire from a stored record, its status, (when includeGmp was asked
 * for and allowed) its latest visible GMP snapshot, `undefined` leaving `gmp` out, and its
 * latest visible subscription snapshot (absent: none).
 *
 * @example
 * ```ts
 * toWireIpo(record, 'listed').isSme; // record.type === 'SME'
 * ```
 */
export function toWireIpo(record: IpoRecord, status: IpoStatus, gmp?: SnapshotRecord | null, subscription?: SubscriptionRecord | null): Ipo {
  // A copy of the template has every key in wire order: filling it stores into existing
  // properties, so the key order never depends on the record's own.
  const ipo: Record<string, unknown> = { ...WIRE_TEMPLATE };
  const stored = record as unknown as Readonly<Record<string, unknown>>;
  for (let i = 0; i < STORED_KEYS.length; i++) {
    const key = STORED_KEYS[i]!;
    const value = stored[key];
    // A record stored before a field existed (a PostgreSQL row's document, say) lacks it:
    // it reads as unknown, `[]` for a list, as the field's import default.
    ipo[key] = value !== undefined ? value : STORED_LISTS[i] ? [] : null;
  }
  for (let i = 0; i < DERIVED_KEYS.length; i++) ipo[DERIVED_KEYS[i]!] = DERIVED_VALUES[i]!(record, status);
  ipo['subscription'] = subscription === undefined || subscription === null ? null : toSubscriptionSnapshot(subscription);
  if (gmp !== undefined) ipo['gmp'] = gmp === null ? null : toGmpSnapshot(gmp, highPaise(record));
  return ipo as unknown as Ipo;
}

/** The high of the record's price band in paise (what the GMP snapshot's figures need), or null. */
function highPaise(record: IpoRecord): number | null {
  return priceBandPaise(record.priceRange)?.high ?? null;
}

/** The fields of `IPO_FIELDS` computed for the wire, but `subscription` and `gmp` (which are given). */
type DerivedName = Exclude<{ [K in IpoFieldName]: (typeof IPO_FIELDS)[K]['check'] extends 'derived' ? K : never }[IpoFieldName], GivenName>;

/** The two last keys of the IPO object, given with the record rather than computed from it. */
type GivenName = 'subscription' | 'gmp';

/** How each derived field is computed: a derived field added to `IPO_FIELDS` is a type error here until it is. */
const DERIVED: { readonly [K in DerivedName]: (record: IpoRecord, status: IpoStatus) => Ipo[K] } = {
  isSme: (record) => record.type === 'SME',
  lotSize: (record) => record.minQty,
  status: (_, status) => status,
  priceBand: (record) => toPriceBand(record.priceRange),
  issueSizeCrore: (record) => issueSizeCrore(record.issueSize),
};

// Made once, at load, from IPO_FIELDS: the wire's keys (but the given ones) in order, which of
// them are stored and which derived, so that a request only walks arrays.
const GIVEN_KEYS: readonly IpoFieldName[] = ['subscription', 'gmp'] satisfies readonly GivenName[];
const WIRE_KEYS = (Object.keys(IPO_FIELDS) as IpoFieldName[]).filter((key) => !GIVEN_KEYS.includes(key));
// `subscription` comes after every other key but `gmp` (ipo-fields.test.ts pins the order).
const WIRE_TEMPLATE: Readonly<Record<string, unknown>> = Object.fromEntries([...WIRE_KEYS.map((key) => [key, null]), ['subscription', null]]);
const DERIVED_KEYS = WIRE_KEYS.filter((key): key is DerivedName => Object.hasOwn(DERIVED, key));
const DERIVED_VALUES = DERIVED_KEYS.map((key) => DERIVED[key]);
const STORED_KEYS = WIRE_KEYS.filter((key) => !Object.hasOwn(DERIVED, key));
const STORED_LISTS = STORED_KEYS.map((key) => (IPO_FIELDS[key].schema as { type?: unknown }).type === 'array');

/**
 * The IPO object's JSON text: the bytes of `JSON.stringify(toWireIpo(record, status, gmp, subscription))`.
 * For a frozen record (a store that hands out immutable records, as the memory store does)
 * the text around `status` is built once per record and kept while the record lives, and a
 * frozen subscription snapshot's text once per snapshot.
 *
 * @example
 * ```ts
 * ipoJson(record, 'open') === JSON.stringify(toWireIpo(record, 'open')); // true
 * ```
 */
export function ipoJson(record: IpoRecord, status: IpoStatus, gmp?: SnapshotRecord | null, subscription?: SubscriptionRecord | null): string {
  let parts = FRAGMENTS.get(record);
  if (parts === undefined) {
    parts = fragmentsOf(record);
    if (parts.frozen) FRAGMENTS.set(record, parts);
  }
  const { head, tail } = parts;
  const latest = subscription ?? null;
  if (gmp === undefined) {
    // Without GMP the text depends on the record, its status and its latest subscription
    // snapshot alone: the last one made is kept, flat (an array's join makes one string;
    // `+` makes a tree of its parts, which a page's join of 100 of them walks again).
    const kept = parts.text;
    if (kept !== null && kept.status === status && kept.subscription === latest) return kept.text;
    const text = [head, status, tail, subscriptionJson(latest), '}'].join('');
    if (parts.frozen && (latest === null || Object.isFrozen(latest))) parts.text = { status, subscription: latest, text };
    return text;
  }
  const snapshot = gmp === null ? 'null' : snapshotJson(gmp, parts.highPaise);
  return `${head}${status}${tail}${subscriptionJson(latest)},"gmp":${snapshot}}`;
}

/**
 * The UTF-8 bytes of {@link ipoJson} without GMP, kept with the text: for a frozen record and
 * a frozen (or no) subscription snapshot, whose text is kept; otherwise null (the caller
 * writes the text). A list page copies these into its body, with no string of the whole
 * page in between.
 *
 * @example
 * ```ts
 * new TextDecoder().decode(ipoJsonBytes(frozenRecord, 'open', null)!) === ipoJson(frozenRecord, 'open'); // true
 * ```
 */
export function ipoJsonBytes(record: IpoRecord, status: IpoStatus, subscription: SubscriptionRecord | null): Uint8Array | null {
  ipoJson(record, status, undefined, subscription);
  const kept = FRAGMENTS.get(record)?.text;
  if (kept === undefined || kept === null || kept.status !== status || kept.subscription !== subscription) return null;
  return (kept.bytes ??= UTF8.encode(kept.text));
}

const UTF8 = new TextEncoder();

/**
 * The bytes of `JSON.stringify(toGmpSnapshot(record, highPaise))`, written directly (a list
 * page writes one per IPO): numbers print as JSON prints them (`paiseToRupees` never gives
 * -0), source names go through `JSON.stringify` for their escapes.
 */
function snapshotJson(record: SnapshotRecord, highPaise: number | null): string {
  const a = record.aggregations;
  const { estimatedListingPrice, gmpPercent } = gmpFigures(highPaise, a.mean);
  let text = `{"lastUpdatedAt":"${toIsoUtc(record.timestamp)}","aggregations":{`;
  for (let i = 0; i < GMP_FIELDS.length; i++) text += AGGREGATION_KEYS[i]! + rupeesText(a[GMP_FIELDS[i]!]);
  text += `},"estimatedListingPrice":${String(estimatedListingPrice)},"gmpPercent":${String(gmpPercent)},"sources":[`;
  const sources = record.sources;
  for (let i = 0; i < sources.length; i++) {
    const source = sources[i]!;
    text += `${i === 0 ? '' : ','}{"name":${JSON.stringify(source.name)},"gmpPrice":${paiseToRupees(source.paise)}}`;
  }
  return `${text}]}`;
}

/** `"mean":`, `,"median":`, ...: each GMP field's key as the snapshot's JSON writes it, in `GMP_FIELDS` order. */
const AGGREGATION_KEYS = GMP_FIELDS.map((field, i) => `${i === 0 ? '' : ','}${JSON.stringify(field)}:`);

function rupeesText(paise: number | null): string {
  return paise === null ? 'null' : String(paiseToRupees(paise));
}

/**
 * What {@link ipoJson} keeps per record: the JSON text before the status value and after
 * it up to the subscription's value (a status needs no escaping), and the price band's high in paise, which the GMP
 * snapshot's derived figures need (read from the record once, not per request).
 */
interface Fragments {
  head: string;
  tail: string;
  highPaise: number | null;
  /** Whether the record is frozen (then these fragments are kept with it). */
  frozen: boolean;
  /** The last whole text made without GMP, for a frozen record and subscription snapshot. */
  text: { status: IpoStatus; subscription: SubscriptionRecord | null; text: string; bytes?: Uint8Array } | null;
}

const FRAGMENTS = new WeakMap<IpoRecord, Fragments>();

/** The one-IPO route's answer text and its UTF-8 length in bytes. */
export interface AnswerText {
  text: string;
  bytes: number;
}

/**
 * The one-IPO route's answer without GMP, `{"ipo":...}`, and its UTF-8 length: for a frozen
 * record (and a frozen or null latest subscription snapshot), made once per record, status
 * (a status changes at most once an IST day) and subscription snapshot, and kept while the
 * record lives, so that a request for the same IPO neither joins the text nor measures it
 * again. `byteLength` is the measure of the answers made.
 *
 * @example
 * ```ts
 * ipoAnswer(record, 'open', utf8Length).text === `{"ipo":${ipoJson(record, 'open')}}`; // true
 * ```
 */
export function ipoAnswer(record: IpoRecord, status: IpoStatus, byteLength: (text: string) => number, subscription: SubscriptionRecord | null = null): AnswerText {
  const kept = ANSWERS.get(record);
  if (kept !== undefined && kept.status === status && kept.subscription === subscription) return kept;
  const text = `{"ipo":${ipoJson(record, status, undefined, subscription)}}`;
  const answer = { status, subscription, text, bytes: byteLength(text) };
  if (Object.isFrozen(record) && (subscription === null || Object.isFrozen(subscription))) ANSWERS.set(record, answer);
  return answer;
}

const ANSWERS = new WeakMap<IpoRecord, AnswerText & { status: IpoStatus; subscription: SubscriptionRecord | null }>();

/** The {@link Fragments} of a record. */
function fragmentsOf(record: IpoRecord): Fragments {
  const text = JSON.stringify(toWireIpo(record, 'open'));
  // Quotes inside string values are escaped, so these are the status key and the last key.
  const marker = ',"status":"open"';
  const at = text.indexOf(marker);
  const last = ',"subscription":null}';
  return {
    head: `${text.slice(0, at)},"status":"`,
    tail: `${text.slice(at + marker.length - 1, -last.length)},"subscription":`,
    highPaise: highPaise(record),
    frozen: Object.isFrozen(record),
    text: null,
  };
}

/**
 * The error body of a code (its status and title from the one table, `WIRE_ERRORS`), with a
 * one-sentence detail and optional meta.
 *
 * @example
 * ```ts
 * errorBody('ERR:NOTFOUND', 'No IPO has the identifier "X".');
 * // { status: '404', title: 'Not Found', detail: 'No IPO has the identifier "X".', code: 'ERR:NOTFOUND' }
 * ```
 */
export function errorBody(code: WireErrorCode, detail: string, meta?: ErrorBody['meta']): ErrorBody {
  const { status, title } = WIRE_ERRORS[code];
  const body: ErrorBody = { status: String(status), title, detail, code };
  if (meta !== undefined) body.meta = meta;
  return body;
}
