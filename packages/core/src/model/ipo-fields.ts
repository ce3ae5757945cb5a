/**
 * The IPO object's fields, written once (docs/spec.md#ipo-object, #datasets): each field's
 * name and place (the table's order is the wire's key order), its JSON Schema and TypeScript
 * type (one TypeBox declaration gives both), and how a dataset checks it. The types
 * (`IpoRecord`, `Ipo`), the serializer's key order, the dataset checker's field list and the
 * OpenAPI `Ipo` component are all derived from {@link IPO_FIELDS}; the limits and patterns
 * below are the ones the dataset checker enforces and the OpenAPI document states.
 *
 * A new nullable text field is one line here (its place in the table is its place on the
 * wire); the stores keep IPO records whole, so they need nothing.
 */
import { Type, type Static, type TObject, type TOptional, type TSchema } from '@sinclair/typebox';
import { EXCHANGES, IPO_TYPES, STATUS_VALUES } from './types.js';
import type { Exchange, GmpSnapshot, IpoStatus, IpoType, ListingPrice, PriceBand, ScheduleEvent, SubscriptionSnapshot } from './types.js';

// ---------------------------------------------------------------------------------------
// Limits and patterns: the dataset checker enforces them, the OpenAPI document states them.

/** The longest text a dataset may hold, in code points. */
export const MAX_TEXT_LENGTH = 10_000;
/** The longest slug, in characters. */
export const MAX_SLUG_LENGTH = 128;
/** The largest integer a dataset's integer fields may hold (PostgreSQL's `integer`). */
export const MAX_INT32 = 2_147_483_647;
/** An IPO id: 1 to 64 of A-Z, a-z, 0-9, `.`, `_` and `-`, starting with a letter or digit. */
export const ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';
/** A ticker symbol: 1 to 32 of A-Z, a-z, 0-9, `&`, `.`, `_` and `-`, starting with a letter or digit. */
export const SYMBOL_PATTERN = '^[A-Za-z0-9][A-Za-z0-9&._-]{0,31}$';
/** A slug: lowercase letters and digits in parts joined by single `-` (at most {@link MAX_SLUG_LENGTH}). */
export const SLUG_PATTERN = '^[a-z0-9]+(-[a-z0-9]+)*$';
/**
 * A price band `<low>-<high>`, each with at most 2 decimals. Groups 1 and 3 are the low's
 * digits and decimals, 4 and 6 the high's (plain groups only: JSON Schema's portable subset).
 */
export const PRICE_RANGE_PATTERN = '^([0-9]+)(\\.([0-9]{1,2}))?-([0-9]+)(\\.([0-9]{1,2}))?$';
/** A listing gain: a decimal number as text, e.g. `15.5` or `-2`. */
export const LISTING_GAIN_PATTERN = '^-?[0-9]+(\\.[0-9]+)?$';
/** Prices (listing prices, the price band's) are below this many rupees, as GMP values are (docs/spec.md#numbers). */
export const PRICE_LIMIT = 10_000_000;
/** The longest `q` of the list (docs/spec.md#list), in characters (code points): the list parser enforces it, the OpenAPI document states it. */
export const MAX_Q_LENGTH = 64;
/** A calendar day's form, `YYYY-MM-DD` (whether it is a real date is checked apart). */
export const DATE_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';

// ---------------------------------------------------------------------------------------
// The fields

/**
 * How a dataset checks a field (docs/spec.md#datasets). The simple kinds are checked from
 * the table alone: `text` (a non-empty string or null; `required-text`: not null), `url`
 * (text that is a link, as imported), `date` (`YYYY-MM-DD` or null), `integer` (whole, from
 * the schema's `minimum` to its `maximum`, or null), `texts` (an array of texts). The others
 * have dedicated code in the checker, which reads its limits and patterns from this module.
 * `derived` fields are computed for the wire and ignored in a dataset.
 */
export type IpoFieldCheck =
  | 'required-text'
  | 'text'
  | 'url'
  | 'date'
  | 'integer'
  | 'texts'
  | 'id'
  | 'symbol'
  | 'slug'
  | 'type'
  | 'exchanges'
  | 'price-range'
  | 'listing-gain'
  | 'schedule'
  | 'listing-prices'
  | 'derived';

/** One field of {@link IPO_FIELDS}: its JSON Schema (with its TypeScript type) and its dataset check. */
export interface IpoField<S extends TSchema = TSchema, C extends IpoFieldCheck = IpoFieldCheck> {
  schema: S;
  check: C;
}

/**
 * Every key of the IPO object, in wire order: the stored fields and, with `check:
 * 'derived'`, those computed for the wire (`isSme`, `lotSize`, `status`, `priceBand`,
 * `issueSizeCrore`, `subscription`, `gmp`).
 *
 * @example
 * ```ts
 * Object.keys(IPO_FIELDS).slice(0, 4); // ['id', 'name', 'symbol', 'slug']
 * IPO_FIELDS.minQty.schema.minimum;    // 1
 * ```
 */
export const IPO_FIELDS = {
  id: field('id', Type.String({ pattern: ID_PATTERN, description: 'The canonical id: unique, opaque.', examples: ['2026000001'] })),
  name: field('required-text', Type.String({ minLength: 1, maxLength: MAX_TEXT_LENGTH, description: 'Company or issue name.' })),
  symbol: field('symbol', nullable<string>({ type: ['string', 'null'], pattern: SYMBOL_PATTERN, description: 'Ticker, unique ignoring ASCII case; DEBT issues may have none.' })),
  slug: field('slug', Type.String({ pattern: SLUG_PATTERN, maxLength: MAX_SLUG_LENGTH, description: 'URL-friendly name, unique.' })),
  type: field('type', Type.Unsafe<IpoType>({ type: 'string', enum: [...IPO_TYPES], description: 'EQ (mainboard equity), SME or DEBT.' })),
  isSme: field('derived', Type.Boolean({ description: '`type === "SME"`.' })),
  exchanges: field(
    'exchanges',
    Type.Unsafe<Exchange[]>({
      type: 'array',
      items: { type: 'string', enum: [...EXCHANGES] },
      uniqueItems: true,
      maxItems: 2,
      not: { const: ['bse', 'nse'] },
      description: 'Where it lists: `nse` before `bse`, no repeats. Drives the `source` filter.',
    }),
  ),
  infoUrl: nullableText('url', 'Link to further information (a URL as imported).'),
  nseInfoUrl: nullableText('url', 'The NSE issue page (a URL as imported).'),
  prospectusUrl: nullableText('url', 'The prospectus (a URL as imported).'),
  logo: nullableText('url', 'Logo URL (as imported).'),
  startDate: nullableDate('Issue opens (an IST calendar day).'),
  endDate: nullableDate('Issue closes.'),
  listingDate: nullableDate('Listing day.'),
  priceRange: field(
    'price-range',
    nullable<string>({
      type: ['string', 'null'],
      pattern: PRICE_RANGE_PATTERN,
      description: 'Price band `"<low>-<high>"` in rupees, each with at most 2 decimals, low <= high; a fixed price is `"100-100"`.',
      examples: ['95-100'],
    }),
  ),
  minQty: nullableInteger('integer', 1, 'Shares in one lot (the minimum bid).'),
  lotSize: nullableInteger('derived', 1, 'The same value as `minQty`.'),
  minAmount: nullableInteger('integer', 0, 'Rupees for one lot at the upper band.'),
  issueSize: nullableText('text', 'As published, e.g. `"192cr"`.'),
  listingGain: field(
    'listing-gain',
    nullable<string>({
      type: ['string', 'null'],
      pattern: LISTING_GAIN_PATTERN,
      description: 'Listing gain in percent as decimal text, e.g. `"15.5"`, `"-2"`; null until listed.',
    }),
  ),
  status: field('derived', Type.Unsafe<IpoStatus>({ type: 'string', enum: [...STATUS_VALUES], description: 'Derived from the dates and today in Asia/Kolkata.' })),
  schedule: field(
    'schedule',
    Type.Unsafe<ScheduleEvent[]>({ type: 'array', items: { $ref: '#/components/schemas/ScheduleEvent' }, description: 'Ascending by date (same-day events keep their imported order).' }),
  ),
  about: nullableText('text', 'Description of the company.'),
  strengths: textList('Strengths, as imported.'),
  risks: textList('Risks, as imported.'),
  mediaCoverageLinks: textList('Links to media coverage.'),
  priceBand: field(
    'derived',
    Type.Unsafe<PriceBand | null>({
      description: '`priceRange` as numbers in rupees (exact); null when `priceRange` is null or its high is 10,000,000 rupees or more.',
      oneOf: [{ $ref: '#/components/schemas/PriceBand' }, { type: 'null' }],
    }),
  ),
  issueSizeCrore: field(
    'derived',
    nullable<number>({
      type: ['number', 'null'],
      minimum: 0,
      description:
        '`issueSize` in crore when the whole text is digits with an optional decimal part, optional spaces, then `cr` or `crore` (ASCII case ignored), e.g. `"24.50cr"` -> 24.5; else null.',
    }),
  ),
  registrar: nullableText('text', 'The registrar to the issue.'),
  leadManagers: textList('The book-running lead managers, in the given order.'),
  marketMaker: nullableText('text', 'The market maker (SME issues).'),
  sector: nullableText('text', 'The company\'s sector.'),
  listingPrices: field(
    'listing-prices',
    Type.Unsafe<ListingPrice[]>({
      type: 'array',
      items: { $ref: '#/components/schemas/ListingPrice' },
      maxItems: 2,
      description: 'The listing day\'s prices per exchange, `nse` before `bse`, each exchange at most once; `[]` until known.',
    }),
  ),
  subscription: field(
    'derived',
    Type.Unsafe<SubscriptionSnapshot | null>({
      description: 'The latest subscription snapshot at or before now (times subscribed per investor category), or null when there is none.',
      oneOf: [{ $ref: '#/components/schemas/SubscriptionSnapshot' }, { type: 'null' }],
    }),
  ),
  gmp: field(
    'derived',
    Type.Optional(
      Type.Unsafe<GmpSnapshot | null>({
        description: 'Present only when `includeGmp=true` was asked for and allowed: the latest snapshot at or before now, or null when the IPO has none yet.',
        oneOf: [{ $ref: '#/components/schemas/GmpSnapshot' }, { type: 'null' }],
      }),
    ),
  ),
} as const;

/** The name of a field of {@link IPO_FIELDS}. */
export type IpoFieldName = keyof typeof IPO_FIELDS;

/** The fields of {@link IPO_FIELDS} that stores keep (all but the derived ones). */
export type StoredIpoFieldName = { [K in IpoFieldName]: (typeof IPO_FIELDS)[K]['check'] extends 'derived' ? never : K }[IpoFieldName];

/** Every field's schema, as one TypeBox object (the OpenAPI `Ipo` component is made from it). */
export const IPO_SCHEMA = objectOf(Object.keys(IPO_FIELDS) as IpoFieldName[]);

type Fields = typeof IPO_FIELDS;
type Optional<K extends IpoFieldName> = Fields[K]['schema'] extends TOptional<TSchema> ? K : never;

// The static types of the schemas above (as TypeBox's `Static` gives them), field by field in
// the table's order, so that editors and the API report list them in wire order.

/** The static types of the stored fields' schemas: an IPO as stores keep it (`IpoRecord`). */
export type IpoRecordShape = { -readonly [K in keyof Fields as K extends StoredIpoFieldName ? K : never]: Static<Fields[K]['schema']> };
/** The static type of {@link IPO_SCHEMA}: the IPO object of the wire (`Ipo`). */
export type IpoShape = Flatten<
  { -readonly [K in keyof Fields as K extends Optional<K> ? never : K]: Static<Fields[K]['schema']> } & {
    -readonly [K in keyof Fields as K extends Optional<K> ? K : never]?: Fields[K]['schema'] extends TOptional<infer S> ? Static<S> : never;
  }
>;

/** One object type from an intersection (the required fields and the optional ones), its keys in order. */
type Flatten<T> = { [K in keyof T]: T[K] };

// ---------------------------------------------------------------------------------------
// Builders of the table's entries (each ties a check to the schema it needs)

function field<C extends IpoFieldCheck, S extends TSchema>(check: C, schema: S): IpoField<S, C> {
  return { schema, check };
}

/** A schema with `type: [..., 'null']` (OpenAPI 3.1): TypeBox's unions would write `anyOf`. */
function nullable<T>(schema: Record<string, unknown>) {
  return Type.Unsafe<T | null>(schema);
}

function nullableText<C extends 'text' | 'url'>(check: C, description: string) {
  return field(check, nullable<string>({ type: ['string', 'null'], minLength: 1, maxLength: MAX_TEXT_LENGTH, description }));
}

function nullableDate(description: string) {
  return field('date', nullable<string>({ type: ['string', 'null'], format: 'date', pattern: DATE_PATTERN, description }));
}

function nullableInteger<C extends 'integer' | 'derived', M extends number>(check: C, minimum: M, description: string) {
  const schema = Type.Unsafe<number | null>({ type: ['integer', 'null'], minimum, maximum: MAX_INT32, description });
  return field(check, schema as typeof schema & { minimum: M; maximum: typeof MAX_INT32 });
}

function textList(description: string) {
  return field('texts', Type.Array(Type.String({ minLength: 1, maxLength: MAX_TEXT_LENGTH }), { description }));
}

type SchemasOf<K extends IpoFieldName> = { [P in K]: (typeof IPO_FIELDS)[P]['schema'] };

function objectOf<K extends IpoFieldName>(names: readonly K[]): TObject<SchemasOf<K>> {
  const properties = Object.fromEntries(names.map((name) => [name, IPO_FIELDS[name].schema])) as SchemasOf<K>;
  return Type.Object(properties);
}
