/**
 * `ipokit webhooks create | list | delete | deliveries | replay | pause | resume |
 * rotate-secret | test`: an account's webhook
 * endpoints and their deliveries, in PostgreSQL (docs/spec.md#webhooks). The signing secret
 * is printed once, by `create`; `ipokit worker` (or `ipokit serve`) sends the deliveries.
 */
import { parseArgs } from 'node:util';
import { createWebhook, deleteWebhook, EVENT_TYPES, listDeliveries, listWebhooks, replayDelivery, rotateWebhookSecret, sendTestEvent, updateWebhook, type DeliveryInfo, type EventType, type WebhookInfo } from '@ipokit/core';
import { integer, parseOrThrow, required, takePositionals } from './args.js';
import { loadAllowedNetworks } from './config.js';
import { onStore } from './database.js';
import { columns, fields, outputOf, type OutputMode } from './format.js';
import { CliError, type CliIo, type Command } from './io.js';

/**
 * `ipokit webhooks create --account ID --url URL --events TYPES [--description TEXT]`,
 * `ipokit webhooks list --account ID`, `ipokit webhooks delete ID`,
 * `ipokit webhooks deliveries ID [--limit N] [--before DELIVERY_ID]`,
 * `ipokit webhooks replay WEBHOOK_ID DELIVERY_ID`, `ipokit webhooks pause ID`,
 * `ipokit webhooks resume ID`, `ipokit webhooks rotate-secret ID [--overlap-seconds N]`,
 * `ipokit webhooks test ID`.
 *
 * @example
 * ```ts
 * await webhooksCommand(['create', '--account', accountId, '--url', 'https://example.com/hooks/ipo', '--events', 'all', '--quiet'], io); // prints whsec_...
 * ```
 */
export const webhooksCommand: Command = async (argv, io) => {
  const [action, ...rest] = argv;
  if (action === 'create') return create(rest, io);
  if (action === 'list') return list(rest, io);
  if (action === 'delete') return remove(rest, io);
  if (action === 'deliveries') return deliveries(rest, io);
  if (action === 'replay') return replay(rest, io);
  if (action === 'pause' || action === 'resume') return pause(action, rest, io);
  if (action === 'rotate-secret') return rotate(rest, io);
  if (action === 'test') return test(rest, io);
  const actions = 'create, list, delete, deliveries, replay, pause, resume, rotate-secret or test';
  throw new CliError(action === undefined ? `missing action: ${actions}` : `unknown action ${JSON.stringify(action)}: ${actions}`);
};

const OUTPUT = {
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  schema: { type: 'string' },
} as const;

/** The most deliveries one page lists (the core's cap). */
const MAX_PAGE = 100;
/** The core's page when `--limit` is not given. */
const DEFAULT_PAGE = 20;

/**
 * The event types of `--events`: `all`, or a comma-separated list of types (each once, in
 * the contract's order). An unknown type, or none, is a usage error that lists them.
 *
 * @example
 * ```ts
 * eventsOf('gmp.snapshot,ipo.created'); // ['ipo.created', 'gmp.snapshot']
 * eventsOf('all');                      // every type of EVENT_TYPES
 * ```
 */
export function eventsOf(value: string): EventType[] {
  if (value.trim() === 'all') return [...EVENT_TYPES];
  const given = value.split(',').map((t) => t.trim());
  const types = `all, or a comma-separated list of ${EVENT_TYPES.join(', ')}`;
  for (const type of given) {
    if (type === '') throw new CliError(`--events must be ${types}; got ${JSON.stringify(value)}`);
    if (!EVENT_TYPES.includes(type as EventType)) throw new CliError(`--events: unknown event type ${JSON.stringify(type)}: use ${types}`);
  }
  return EVENT_TYPES.filter((t) => given.includes(t));
}

/**
 * An endpoint's state: `enabled`, or `disabled since ...` once deliveries to it failed for
 * 5 days (a new endpoint is needed then).
 *
 * @example
 * ```ts
 * webhookState({ disabledAt: null }); // 'enabled'
 * ```
 */
export function webhookState(hook: Pick<WebhookInfo, 'disabledAt'>): string {
  return hook.disabledAt === null ? 'enabled' : `disabled since ${hook.disabledAt}`;
}

/**
 * An account's endpoints as a table: `ipokit webhooks list` prints it. EVENTS is `all` when
 * the endpoint takes every event type there is.
 *
 * @example
 * ```ts
 * io.stdout.write(webhooksTable(await listWebhooks(store, { accountId })));
 * // ID        URL                            EVENTS  STATE    CREATED                   DESCRIPTION
 * // wh_a1...  https://example.com/hooks/ipo  all     enabled  2026-11-24T09:14:05.120Z  alerts
 * ```
 */
export function webhooksTable(hooks: readonly WebhookInfo[]): string {
  return columns(
    ['ID', 'URL', 'EVENTS', 'STATE', 'CREATED', 'DESCRIPTION'],
    hooks.map((h) => [h.id, h.url, eventsText(h.events), webhookState(h), h.createdAt, h.description ?? '']),
  );
}

/**
 * An endpoint's deliveries as a table, newest first: `ipokit webhooks deliveries` prints it.
 * `-` where there is nothing (no attempt yet, no status, no error, no attempt due).
 *
 * @example
 * ```ts
 * io.stdout.write(deliveriesTable(await listDeliveries(store, { webhookId })));
 * // ID        EVENT      TYPE         STATE      ATTEMPTS  LAST STATUS  NEXT ATTEMPT  LAST ERROR
 * // dlv_...   evt_...    ipo.created  delivered  1         204          -             -
 * ```
 */
export function deliveriesTable(rows: readonly DeliveryInfo[]): string {
  return columns(
    ['ID', 'EVENT', 'TYPE', 'STATE', 'ATTEMPTS', 'LAST STATUS', 'NEXT ATTEMPT', 'LAST ERROR'],
    rows.map((d) => [d.id, d.eventId, d.eventType, d.state, String(d.attempts), d.lastStatus === null ? '-' : String(d.lastStatus), d.nextAttemptAt ?? '-', d.lastError ?? '-']),
  );
}

function eventsText(events: readonly EventType[]): string {
  return EVENT_TYPES.every((t) => events.includes(t)) ? 'all' : events.join(',');
}

/** `--description ''` would store an empty description: leave the option out for none. */
function descriptionOf(value: string | undefined): string | undefined {
  if (value === '') throw new CliError('--description must not be empty (leave it out for none)');
  return value;
}

/** A positional id: empty is a usage error. */
function nonEmpty(name: string, value: string): string {
  if (value === '') throw new CliError(`${name} must not be empty`);
  return value;
}

async function create(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOrThrow(() =>
    parseArgs({
      args: [...argv],
      options: {
        account: { type: 'string' },
        url: { type: 'string' },
        events: { type: 'string' },
        description: { type: 'string' },
        'webhook-allow-network': { type: 'string', multiple: true },
        config: { type: 'string' },
        ...OUTPUT,
      },
      strict: true,
      allowPositionals: true,
    }),
  );
  takePositionals(positionals, []);
  const accountId = required('--account', values.account);
  const url = required('--url', values.url);
  const events = eventsOf(required('--events', values.events));
  const description = descriptionOf(values.description);
  const output = outputOf(values);
  const webhookAllowedNetworks = await loadAllowedNetworks(values.config, values['webhook-allow-network'], io);
  const at = new Date();
  const { created, info } = await onStore(io, values.schema, async (store) => {
    const hook = await createWebhook(store, { accountId, url, events, ...(description === undefined ? {} : { description }) }, { now: () => at, webhookAllowedNetworks });
    // The endpoint as stored (its URL normalized). The secret is printed whatever happens
    // here, since it is never shown again: if the list fails, the endpoint as given.
    const stored = (await listWebhooks(store, { accountId }).catch(() => [])).find((h) => h.id === hook.id);
    const given: WebhookInfo = { id: hook.id, url, events, description: description ?? null, createdAt: at.toISOString(), disabledAt: null, pausedAt: null };
    return { created: hook, info: stored ?? given };
  });
  printCreated(created.secret, { ...info, accountId }, output, io);
  return 0;
}

/** The new endpoint: a short table, JSON, or the secret alone; and the warnings on stderr. */
function printCreated(secret: string, hook: WebhookInfo & { accountId: string }, output: OutputMode, io: CliIo): void {
  const { id, accountId, url, events, description, createdAt, disabledAt } = hook;
  if (output === 'json') io.stdout.write(`${JSON.stringify({ id, secret, accountId, url, events, description, createdAt, disabledAt })}\n`);
  else if (output === 'quiet') io.stdout.write(`${secret}\n`);
  else {
    io.stdout.write(
      fields([
        ['id', id],
        ['account', accountId],
        ['url', url],
        ['events', events.join(', ')],
        ...(description === null ? [] : [['description', description] as const]),
        ['createdAt', createdAt],
        ['secret', secret],
      ]),
    );
  }
  // On stderr, so that `SECRET=$(ipokit webhooks create ... --quiet)` still shows them.
  io.stderr.write(`This is the only time the signing secret of webhook ${id} is shown: store it now, where the receiver verifies deliveries with it.\n`);
  if (url.startsWith('http:')) {
    io.stderr.write('Its URL is http:, which a worker sends to only with --allow-insecure-webhooks (IPOKIT_ALLOW_INSECURE_WEBHOOKS): use https: beyond local tests.\n');
  }
}

async function list(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOrThrow(() => parseArgs({ args: [...argv], options: { account: { type: 'string' }, ...OUTPUT }, strict: true, allowPositionals: true }));
  takePositionals(positionals, []);
  const accountId = required('--account', values.account);
  const output = outputOf(values);
  const hooks = await onStore(io, values.schema, (store) => listWebhooks(store, { accountId }));
  if (output === 'json') io.stdout.write(`${JSON.stringify(hooks)}\n`);
  else if (output === 'quiet') io.stdout.write(hooks.map((h) => `${h.id}\n`).join(''));
  else if (hooks.length === 0) io.stderr.write(`Account ${accountId} has no webhooks: create one with 'ipokit webhooks create --account ${accountId} --url URL --events all'.\n`);
  else io.stdout.write(webhooksTable(hooks));
  return 0;
}

async function remove(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOrThrow(() => parseArgs({ args: [...argv], options: { schema: OUTPUT.schema }, strict: true, allowPositionals: true }));
  const [id] = takePositionals(positionals, ['ID']) as [string];
  nonEmpty('ID', id);
  await onStore(io, values.schema, (store) => deleteWebhook(store, id));
  io.stdout.write(`Deleted webhook ${id} and its deliveries: nothing more is sent to it.\n`);
  return 0;
}

async function deliveries(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOrThrow(() =>
    parseArgs({
      args: [...argv],
      options: { limit: { type: 'string' }, before: { type: 'string' }, json: OUTPUT.json, schema: OUTPUT.schema },
      strict: true,
      allowPositionals: true,
    }),
  );
  const [webhookId] = takePositionals(positionals, ['ID']) as [string];
  nonEmpty('ID', webhookId);
  const before = values.before === undefined ? undefined : nonEmpty('--before', values.before);
  const limit = values.limit === undefined ? undefined : integer('--limit', values.limit, 1, MAX_PAGE);
  const rows = await onStore(io, values.schema, (store) =>
    listDeliveries(store, { webhookId, ...(before === undefined ? {} : { before }), ...(limit === undefined ? {} : { limit }) }),
  );
  if (values.json) io.stdout.write(`${JSON.stringify(rows)}\n`);
  else if (rows.length === 0) {
    io.stderr.write(
      before === undefined
        ? `Webhook ${webhookId} has no deliveries yet: one is made for each event of the types it takes.\n`
        : `Webhook ${webhookId} has no delivery older than ${before} (or ${before} is not one of its deliveries).\n`,
    );
  } else {
    io.stdout.write(deliveriesTable(rows));
    if (rows.length === (limit ?? DEFAULT_PAGE)) io.stderr.write(`More may follow: --before ${rows[rows.length - 1]!.id}\n`);
  }
  return 0;
}

async function replay(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOrThrow(() => parseArgs({ args: [...argv], options: OUTPUT, strict: true, allowPositionals: true }));
  const [webhookId, deliveryId] = takePositionals(positionals, ['WEBHOOK_ID', 'DELIVERY_ID']) as [string, string];
  nonEmpty('WEBHOOK_ID', webhookId);
  nonEmpty('DELIVERY_ID', deliveryId);
  const output = outputOf(values);
  const at = new Date();
  const again = await onStore(io, values.schema, (store) => replayDelivery(store, { webhookId, deliveryId }, { now: () => at }));
  // (a delivery of that event still pending is answered as it is: made before this call)
  const added = again.id !== deliveryId && Date.parse(again.createdAt) === at.getTime();
  if (output === 'json') io.stdout.write(`${JSON.stringify(again)}\n`);
  else if (output === 'quiet') io.stdout.write(`${again.id}\n`);
  else if (!added) {
    io.stdout.write(
      `${again.id === deliveryId ? deliveryId : `${deliveryId}'s replay ${again.id}`} is still pending (next attempt ${again.nextAttemptAt ?? 'now'}): a replay adds nothing; a worker sends it when it is due.\n`,
    );
  } else {
    io.stdout.write(
      `Replaying ${deliveryId} as ${again.id}: event ${again.eventId} (${again.eventType}) is due now, for the next worker on this database to send (with the same webhook-id, so the receiver can tell it is a repeat).\n`,
    );
  }
  return 0;
}

async function pause(action: 'pause' | 'resume', argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOrThrow(() => parseArgs({ args: [...argv], options: OUTPUT, strict: true, allowPositionals: true }));
  const [id] = takePositionals(positionals, ['ID']) as [string];
  nonEmpty('ID', id);
  const output = outputOf(values);
  const hook = await onStore(io, values.schema, (store) => updateWebhook(store, { id, paused: action === 'pause' }));
  if (output === 'json') io.stdout.write(`${JSON.stringify(hook)}\n`);
  else if (output === 'quiet') io.stdout.write(`${hook.id}\n`);
  else if (action === 'pause') io.stdout.write(`Paused webhook ${id} (since ${hook.pausedAt}): nothing is sent to it; its deliveries wait until 'ipokit webhooks resume ${id}'.\n`);
  else io.stdout.write(`Resumed webhook ${id}: its waiting deliveries are due now.\n`);
  return 0;
}

async function rotate(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOrThrow(() =>
    parseArgs({ args: [...argv], options: { 'overlap-seconds': { type: 'string' }, ...OUTPUT }, strict: true, allowPositionals: true }),
  );
  const [id] = takePositionals(positionals, ['ID']) as [string];
  nonEmpty('ID', id);
  const overlap = values['overlap-seconds'] === undefined ? undefined : integer('--overlap-seconds', values['overlap-seconds'], 0, 604_800);
  const output = outputOf(values);
  const rotated = await onStore(io, values.schema, (store) => rotateWebhookSecret(store, { id, ...(overlap === undefined ? {} : { overlapSeconds: overlap }) }));
  if (output === 'json') io.stdout.write(`${JSON.stringify(rotated)}\n`);
  else if (output === 'quiet') io.stdout.write(`${rotated.secret}\n`);
  else io.stdout.write(fields([['id', id], ['secret', rotated.secret], ['previousSecretExpiresAt', rotated.previousSecretExpiresAt]]));
  io.stderr.write(`This is the only time the new signing secret of webhook ${id} is shown. Deliveries carry both signatures until ${rotated.previousSecretExpiresAt}, then the new one only.\n`);
  return 0;
}

async function test(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOrThrow(() => parseArgs({ args: [...argv], options: OUTPUT, strict: true, allowPositionals: true }));
  const [webhookId] = takePositionals(positionals, ['ID']) as [string];
  nonEmpty('ID', webhookId);
  const output = outputOf(values);
  const delivery = await onStore(io, values.schema, (store) => sendTestEvent(store, { webhookId }));
  if (output === 'json') io.stdout.write(`${JSON.stringify(delivery)}\n`);
  else if (output === 'quiet') io.stdout.write(`${delivery.id}\n`);
  else io.stdout.write(`Sent a webhook.test event to ${webhookId} as delivery ${delivery.id}: due now, for the next worker on this database to send.\n`);
  return 0;
}
