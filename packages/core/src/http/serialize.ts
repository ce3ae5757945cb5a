/**
 * The wire forms of responses (docs/spec.md#ipo-object, #errors): keys in the documented order, JSON
 * written compactly.
 */
import { WIRE_ERRORS, type WireErrorCode } from '../model/errors.js';
import { toGmpSnapshot } from '../model/gmp.js';
import type { ErrorBody, Ipo, IpoRecord, IpoStatus, SnapshotRecord } from '../model/types.js';

/**
 * The IPO object of the wire from a stored record, its status, and (when includeGmp was
 * asked for and allowed) its latest visible snapshot: `undefined` leaves `gmp` out.
 *
 * @example
 * ```ts
 * toWireIpo(record, 'listed').isSme; // record.type === 'SME'
 * ```
 */
export function toWireIpo(record: IpoRecord, status: IpoStatus, gmp?: SnapshotRecord | null): Ipo {
  const ipo: Ipo = {
    id: record.id,
    name: record.name,
    symbol: record.symbol,
    slug: record.slug,
    type: record.type,
    isSme: record.type === 'SME',
    exchanges: record.exchanges,
    infoUrl: record.infoUrl,
    nseInfoUrl: record.nseInfoUrl,
    prospectusUrl: record.prospectusUrl,
    logo: record.logo,
    startDate: record.startDate,
    endDate: record.endDate,
    listingDate: record.listingDate,
    priceRange: record.priceRange,
    minQty: record.minQty,
    lotSize: record.minQty,
    minAmount: record.minAmount,
    issueSize: record.issueSize,
    listingGain: record.listingGain,
    status,
    schedule: record.schedule,
    about: record.about,
    strengths: record.strengths,
    risks: record.risks,
    mediaCoverageLinks: record.mediaCoverageLinks,
  };
  if (gmp !== undefined) ipo.gmp = gmp === null ? null : toGmpSnapshot(gmp);
  return ipo;
}

/**
 * The IPO object's JSON text: the bytes of `JSON.stringify(toWireIpo(record, status, gmp))`.
 * For a frozen record (a store that hands out immutable records, as the memory store does)
 * the text around `status` is built once per record and kept while the record lives.
 *
 * @example
 * ```ts
 * ipoJson(record, 'open') === JSON.stringify(toWireIpo(record, 'open')); // true
 * ```
 */
export function ipoJson(record: IpoRecord, status: IpoStatus, gmp?: SnapshotRecord | null): string {
  let parts = FRAGMENTS.get(record);
  if (parts === undefined) {
    parts = fragmentsOf(record);
    if (Object.isFrozen(record)) FRAGMENTS.set(record, parts);
  }
  const [head, tail] = parts;
  if (gmp === undefined) return head + status + tail;
  const snapshot = gmp === null ? 'null' : JSON.stringify(toGmpSnapshot(gmp));
  return `${head}${status}${tail.slice(0, -1)},"gmp":${snapshot}}`;
}

const FRAGMENTS = new WeakMap<IpoRecord, readonly [string, string]>();

/** The one-IPO route's answer text and its UTF-8 length in bytes. */
export interface AnswerText {
  text: string;
  bytes: number;
}

/**
 * The one-IPO route's answer without GMP, `{"ipo":...}`, and its UTF-8 length: for a frozen
 * record, made once per record and status (a status changes at most once an IST day) and
 * kept while the record lives, so that a request for the same IPO neither joins the text
 * nor measures it again. `byteLength` is the measure of the answers made.
 *
 * @example
 * ```ts
 * ipoAnswer(record, 'open', utf8Length).text === `{"ipo":${ipoJson(record, 'open')}}`; // true
 * ```
 */
export function ipoAnswer(record: IpoRecord, status: IpoStatus, byteLength: (text: string) => number): AnswerText {
  const kept = ANSWERS.get(record);
  if (kept !== undefined && kept.status === status) return kept;
  const text = `{"ipo":${ipoJson(record, status)}}`;
  const answer = { status, text, bytes: byteLength(text) };
  if (Object.isFrozen(record)) ANSWERS.set(record, answer);
  return answer;
}

const ANSWERS = new WeakMap<IpoRecord, AnswerText & { status: IpoStatus }>();

/** The JSON text before the status value and after it (a status needs no escaping). */
function fragmentsOf(record: IpoRecord): readonly [string, string] {
  const text = JSON.stringify(toWireIpo(record, 'open'));
  // Quotes inside string values are escaped, so this is the status key and nothing else.
  const marker = ',"status":"open"';
  const at = text.indexOf(marker);
  return [`${text.slice(0, at)},"status":"`, text.slice(at + marker.length - 1)];
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
