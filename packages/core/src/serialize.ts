/**
 * The wire forms of responses (CONTRACT 1, 7): keys in the documented order, JSON
 * written compactly.
 */
import { REASON_PHRASES, type ErrorCode } from './errors.js';
import { toGmpSnapshot } from './gmp.js';
import type { ErrorBody, Ipo, IpoRecord, IpoStatus, SnapshotRecord } from './types.js';

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
 * An error body (CONTRACT 7) for a code, a one-sentence detail, and optional meta.
 *
 * @example
 * ```ts
 * errorBody(404, 'ERR:NOTFOUND', 'No IPO has the identifier "X".');
 * ```
 */
export function errorBody(status: number, code: ErrorCode, detail: string, meta?: ErrorBody['meta']): ErrorBody {
  const body: ErrorBody = { status: String(status), title: REASON_PHRASES[status] ?? 'Error', detail, code };
  if (meta !== undefined) body.meta = meta;
  return body;
}
