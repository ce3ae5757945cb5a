import { useRef, useState } from 'preact/hooks';
import { ApiError, call, EVENT_TYPES, toApiError, type CreatedWebhook, type Delivery, type EventType, type Plan, type RotatedSecret, type Webhook, type WebhookPlanLimits, type WebhookList } from '../api.js';
import { orList } from '../format.js';
import { useAction, useLoad } from '../hooks.js';
import { href } from '../route.js';
import { ConfirmDialog, CopyField, Dialog, ErrorNote, Loading, PageTitle, Time } from '../ui.js';

/** What each event type means, beside its checkbox. */
const EVENT_HINTS: Record<EventType, string> = {
  'ipo.created': 'an IPO is added',
  'ipo.updated': "an IPO's details change",
  'ipo.deleted': 'an IPO is removed',
  'ipo.status_changed': 'an IPO opens, closes or lists',
  'gmp.snapshot': 'a new GMP snapshot',
  'subscription.snapshot': 'new subscription figures',
};

/** The fields a 400 may name; another parameter's message shows below the form. */
type FieldName = 'url' | 'events' | 'description';

/** A URL with break opportunities after each `/` and before each `?` and `&`, so that a long one wraps between its parts. */
export function Url({ url }: { url: string }) {
  return <>{url.split(/(?<=\/)|(?=[?&])/).map((part, i) => (i === 0 ? part : [<wbr key={i} />, part]))}</>;
}

/** `GET /webhooks` is 404 when the server's store keeps no webhooks. */
export const unavailable = (error: ApiError | undefined): boolean => error?.status === 404;

/** The endpoint's page of deliveries, with one delivery's detail open when `delivery` is given. */
export const deliveriesHref = (hookId: string, delivery?: string): string => href(`/webhooks/${encodeURIComponent(hookId)}`, { delivery });

/** A test event's delivery, shown in its endpoint's card. */
interface Tested {
  hookId: string;
  delivery: Delivery;
}

export function WebhooksPage({ plan }: { plan: Plan | undefined }) {
  const hooks = useLoad((signal) => call<WebhookList>('webhooks', { signal }), []);
  const [created, setCreated] = useState<CreatedWebhook | null>(null);
  const [deleting, setDeleting] = useState<Webhook | null>(null);
  const [editing, setEditing] = useState<Webhook | null>(null);
  const [rotating, setRotating] = useState<Webhook | null>(null);
  const [rotated, setRotated] = useState<{ hook: Webhook; result: RotatedSecret } | null>(null);
  const [tested, setTested] = useState<Tested | null>(null);
  /** What the last action on an endpoint did, said in its card (`role="status"`). */
  const [said, setSaid] = useState<{ hookId: string; text: string } | null>(null);
  const limits = hooks.data?.limits;
  return (
    <>
      <PageTitle>Webhooks</PageTitle>
      <p class="lead">
        Rather than polling, let ipokit POST each change to your endpoints: IPOs added, changed, removed or changing status, and new GMP snapshots. Each request is signed
        (Standard Webhooks) and a failed one is retried over about a day; an endpoint that fails for 5 days is disabled.
      </p>
      {unavailable(hooks.error) ? (
        <div class="note" role="status">
          <p>
            <strong>Webhooks are not available here:</strong> the server of this dashboard keeps no webhook endpoints.
          </p>
        </div>
      ) : (
        <>
          <section aria-labelledby="hooks-heading">
            <div class="section-head">
              <h2 id="hooks-heading">Your endpoints</h2>
              {limits !== undefined && planAllows(limits, plan) && <p class="muted hook-count">{countText(limits)}</p>}
            </div>
            {hooks.error !== undefined && <ErrorNote error={hooks.error} onRetry={hooks.reload} />}
            {hooks.data === undefined ? (
              hooks.error === undefined && <Loading />
            ) : hooks.data.webhooks.length === 0 ? (
              <p>This account has no endpoints yet.</p>
            ) : (
              <ul class="hooks">
                {hooks.data.webhooks.map((hook) => (
                  <HookItem
                    key={hook.id}
                    hook={hook}
                    tested={tested?.hookId === hook.id ? tested.delivery : null}
                    said={said?.hookId === hook.id ? said.text : ''}
                    onSaid={(text) => setSaid({ hookId: hook.id, text })}
                    onTested={(delivery) => setTested({ hookId: hook.id, delivery })}
                    onChanged={hooks.reload}
                    onEdit={setEditing}
                    onRotate={setRotating}
                    onDelete={setDeleting}
                  />
                ))}
              </ul>
            )}
          </section>
          {limits !== undefined && (
            <AddEndpoint
              limits={limits}
              plan={plan}
              onCreated={(hook) => {
                setCreated(hook);
                hooks.reload();
              }}
            />
          )}
        </>
      )}
      {created !== null && <SecretDialog url={created.url} secret={created.secret} onClose={() => setCreated(null)} />}
      {deleting !== null && (
        <DeleteDialog
          target={deleting}
          onClose={() => setDeleting(null)}
          onDone={() => {
            setDeleting(null);
            hooks.reload();
          }}
        />
      )}
      {editing !== null && (
        <EditEventsDialog
          target={editing}
          onClose={() => setEditing(null)}
          onDone={(hook) => {
            setEditing(null);
            setSaid({ hookId: hook.id, text: `Event types saved: ${hook.events.join(', ')}.` });
            hooks.reload();
          }}
        />
      )}
      {rotating !== null && (
        <RotateSecretDialog
          target={rotating}
          onClose={() => setRotating(null)}
          onDone={(result) => {
            setRotating(null);
            setRotated({ hook: rotating, result });
          }}
        />
      )}
      {rotated !== null && (
        <SecretDialog url={rotated.hook.url} secret={rotated.result.secret} previousExpiresAt={rotated.result.previousSecretExpiresAt} onClose={() => setRotated(null)} />
      )}
    </>
  );
}

/**
 * Whether the account's plan has webhooks (`limits.allowed` is also false at the cap). Before
 * the account's plan is known, a refusal that is not the cap is the plan's.
 */
export function planAllows(limits: WebhookPlanLimits, plan: Plan | undefined): boolean {
  if (plan !== undefined) return limits.plans.includes(plan);
  return limits.allowed || (limits.maxPerAccount !== null && limits.used >= limits.maxPerAccount);
}

/** "3 of 10 endpoints", or "3 endpoints" when the plan sets no limit. */
export function countText(limits: WebhookPlanLimits): string {
  const n = limits.used;
  return limits.maxPerAccount === null ? `${n} ${n === 1 ? 'endpoint' : 'endpoints'}` : `${n} of ${limits.maxPerAccount} endpoints`;
}

/** The endpoint's state: a badge (active, paused, or disabled after failing), and since when. */
export function HookState({ hook }: { hook: Webhook }) {
  if (hook.disabledAt !== null) {
    return (
      <>
        <span class="state disabled">disabled</span> <span class="small">since <Time iso={hook.disabledAt} /></span>
      </>
    );
  }
  if (hook.pausedAt !== null) {
    return (
      <>
        <span class="state paused">paused</span> <span class="small">since <Time iso={hook.pausedAt} /></span>
      </>
    );
  }
  return <span class="state active">active</span>;
}

type Action = 'test' | 'pause' | 'resume';

function HookItem({
  hook,
  tested,
  said,
  onSaid,
  onTested,
  onChanged,
  onEdit,
  onRotate,
  onDelete,
}: {
  hook: Webhook;
  tested: Delivery | null;
  said: string;
  onSaid: (text: string) => void;
  onTested: (delivery: Delivery) => void;
  onChanged: () => void;
  onEdit: (hook: Webhook) => void;
  onRotate: (hook: Webhook) => void;
  onDelete: (hook: Webhook) => void;
}) {
  const [busy, setBusy] = useState<Action | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const active = hook.disabledAt === null && hook.pausedAt === null;
  const path = `webhooks/${encodeURIComponent(hook.id)}`;
  const act = async (action: Action) => {
    // aria-disabled rather than disabled while busy: a disabled button drops focus.
    if (busy !== null) return;
    setBusy(action);
    setError(null);
    onSaid('');
    try {
      if (action === 'test') {
        const { delivery } = await call<{ delivery: Delivery }>(`${path}/test`, { method: 'POST', body: {} });
        onTested(delivery);
        onSaid('Test event sent: a new delivery of webhook.test, due now.');
      } else {
        await call<{ webhook: Webhook }>(`${path}/${action}`, { method: 'POST', body: {} });
        onSaid(action === 'pause' ? 'Paused: its deliveries wait until you resume it.' : 'Resumed: waiting deliveries are sent now.');
        onChanged();
      }
    } catch (err) {
      setError(toApiError(err));
    } finally {
      setBusy(null);
    }
  };
  const state = hook.disabledAt !== null ? 'disabled' : hook.pausedAt !== null ? 'paused' : 'active';
  const named = <span class="sr-only"> {hook.url}</span>;
  return (
    <li class={active ? 'card hook' : 'card hook inactive'} data-state={state}>
      <h3 class="hook-url mono" title={hook.url}>
        <Url url={hook.url} />
      </h3>
      {hook.description !== null && hook.description !== '' && <p class="hook-desc">{hook.description}</p>}
      <dl class="facts">
        <dt>State</dt>
        <dd>
          <HookState hook={hook} />
          {hook.disabledAt !== null && <span class="hint wide">Its deliveries failed for 5 days, so nothing is sent to it any more: Resume sends to it again.</span>}
          {hook.disabledAt === null && hook.pausedAt !== null && <span class="hint wide">Nothing is sent while it is paused; its deliveries wait and go out on Resume.</span>}
        </dd>
        <dt>Events</dt>
        <dd>
          <ul class="events">
            {hook.events.map((type) => (
              <li key={type}>
                <code>{type}</code>
              </li>
            ))}
          </ul>
        </dd>
        <dt>Created</dt>
        <dd>
          <Time iso={hook.createdAt} />
        </dd>
      </dl>
      <div class="form-actions hook-actions">
        <a class="button small" href={deliveriesHref(hook.id)}>
          Deliveries<span class="sr-only"> to {hook.url}</span>
        </a>
        {active && (
          <button type="button" class="button small" onClick={() => void act('test')} aria-disabled={busy !== null}>
            {busy === 'test' ? 'Sending…' : 'Send test event'}
            <span class="sr-only"> to {hook.url}</span>
          </button>
        )}
        {active ? (
          <button type="button" class="button small" onClick={() => void act('pause')} aria-disabled={busy !== null}>
            {busy === 'pause' ? 'Pausing…' : 'Pause'}
            {named}
          </button>
        ) : (
          <button type="button" class="button small" onClick={() => void act('resume')} aria-disabled={busy !== null}>
            {busy === 'resume' ? 'Resuming…' : 'Resume'}
            {named}
          </button>
        )}
        <button type="button" class="button small" onClick={() => onEdit(hook)}>
          Edit event types<span class="sr-only"> of {hook.url}</span>
        </button>
        <button type="button" class="button small" onClick={() => onRotate(hook)}>
          Rotate secret<span class="sr-only"> of {hook.url}</span>
        </button>
        <button type="button" class="button small danger" onClick={() => onDelete(hook)}>
          Delete<span class="sr-only"> the endpoint {hook.url}</span>
        </button>
      </div>
      <p class="hint said" role="status">
        {said}
      </p>
      {error !== null && <ErrorNote error={error} />}
      {tested !== null && <TestedDelivery hookId={hook.id} delivery={tested} />}
    </li>
  );
}

/** The test event's delivery: its state now, and a link to its detail (what was sent and what came back). */
function TestedDelivery({ hookId, delivery }: { hookId: string; delivery: Delivery }) {
  return (
    <div class="tested">
      <p>
        <code>{delivery.eventType}</code> <span class={`state ${delivery.state}`}>{delivery.state}</span>{' '}
        <span class="muted small">
          <span class="mono">{delivery.id}</span>, made <Time iso={delivery.createdAt} />
        </span>
      </p>
      <p>
        <a href={deliveriesHref(hookId, delivery.id)}>See what was sent and what came back</a>
      </p>
    </div>
  );
}

/** The form, or what the plan says instead of it: webhooks need another plan, or the account has the most endpoints it may. */
function AddEndpoint({ limits, plan, onCreated }: { limits: WebhookPlanLimits; plan: Plan | undefined; onCreated: (hook: CreatedWebhook) => void }) {
  if (!planAllows(limits, plan)) {
    return (
      <section aria-labelledby="create-hook-heading" class="card create-hook">
        <h2 id="create-hook-heading">Add an endpoint</h2>
        <div class="note warning plan-gate">
          <p>
            <strong>Webhooks need the {orList(limits.plans)} plan.</strong>
            {plan !== undefined && ` This account is on the ${plan} plan.`}
          </p>
          <p>Once the account's plan includes webhooks, add endpoints here.</p>
        </div>
      </section>
    );
  }
  if (!limits.allowed) {
    return (
      <section aria-labelledby="create-hook-heading" class="card create-hook">
        <h2 id="create-hook-heading">Add an endpoint</h2>
        <div class="note plan-gate">
          <p>
            <strong>This account has {countText(limits)},</strong>{' '}
            the most its plan allows: delete one to add another.
          </p>
        </div>
      </section>
    );
  }
  return <CreateWebhookForm onCreated={onCreated} />;
}

/** The event types as checkboxes, each with what it means; ids `${idPrefix}-0`, `-1`, … */
function EventChecks({
  idPrefix,
  value,
  onChange,
  invalid,
  autofocus = false,
}: {
  idPrefix: string;
  value: readonly EventType[];
  onChange: (events: EventType[]) => void;
  invalid: boolean;
  /** Whether the first box takes focus when its dialog opens. */
  autofocus?: boolean;
}) {
  return (
    <ul class="event-checks">
      {EVENT_TYPES.map((type, i) => (
        <li key={type}>
          <label class="check">
            <input
              id={`${idPrefix}-${i}`}
              type="checkbox"
              name="events"
              value={type}
              checked={value.includes(type)}
              aria-invalid={invalid}
              data-autofocus={autofocus && i === 0 ? true : undefined}
              onChange={(e) => {
                const on = e.currentTarget.checked;
                onChange(EVENT_TYPES.filter((t) => (t === type ? on : value.includes(t))));
              }}
            />
            <span>
              <code>{type}</code> <span class="muted small">{EVENT_HINTS[type]}</span>
            </span>
          </label>
        </li>
      ))}
    </ul>
  );
}

function CreateWebhookForm({ onCreated }: { onCreated: (hook: CreatedWebhook) => void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<EventType[]>([...EVENT_TYPES]);
  const [description, setDescription] = useState('');
  const [busy, setBusy] = useState(false);
  /** A message about one field, shown next to it; or about the form, below it. */
  const [error, setError] = useState<{ field: FieldName | null; error: ApiError } | null>(null);
  /** The plan's refusal (403; the plan may change after the page loaded): it replaces the form. */
  const [refused, setRefused] = useState<ApiError | null>(null);
  const refusedRef = useRef<HTMLDivElement>(null);

  const fail = (field: FieldName | null, e: ApiError) => {
    setError({ field, error: e });
    // The field with the problem takes focus, so that its message is read with it.
    if (field !== null) setTimeout(() => document.getElementById(field === 'events' ? 'hook-event-0' : `hook-${field}`)?.focus());
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    // aria-disabled rather than disabled while busy: a disabled button drops focus, and the secret's dialog hands focus back to it.
    if (busy) return;
    if (url.trim() === '') return fail('url', new ApiError(400, 'ERR:BADPARAM', 'Enter the URL of your endpoint, e.g. https://example.com/hooks/ipo.'));
    if (events.length === 0) return fail('events', new ApiError(400, 'ERR:BADPARAM', 'Choose at least one event type.'));
    if ([...description].length > 200) return fail('description', new ApiError(400, 'ERR:BADPARAM', 'The description is at most 200 characters.'));
    setBusy(true);
    setError(null);
    try {
      const body = { url: url.trim(), events, ...(description.trim() === '' ? {} : { description: description.trim() }) };
      const { webhook } = await call<{ webhook: CreatedWebhook }>('webhooks', { method: 'POST', body });
      setUrl('');
      setEvents([...EVENT_TYPES]);
      setDescription('');
      onCreated(webhook);
    } catch (err) {
      const e = toApiError(err);
      if (e.status === 403 && e.code === 'ERR:PLAN') {
        setRefused(e);
        setTimeout(() => refusedRef.current?.focus());
      } else {
        const p = e.status === 400 ? e.parameter : null;
        fail(p === 'url' || p === 'events' || p === 'description' ? p : null, e);
      }
    } finally {
      setBusy(false);
    }
  };
  const fieldError = (field: FieldName) => (error?.field === field ? error.error.message : null);
  const described = (field: FieldName, hint: boolean) => [hint ? `hook-${field}-hint` : '', fieldError(field) !== null ? `hook-${field}-error` : ''].filter((s) => s !== '').join(' ') || undefined;
  const problem = (field: FieldName) => {
    const message = fieldError(field);
    return (
      message !== null && (
        <p id={`hook-${field}-error`} class="field-error">
          {message}
        </p>
      )
    );
  };

  return (
    <section aria-labelledby="create-hook-heading" class="card create-hook">
      <h2 id="create-hook-heading">Add an endpoint</h2>
      {refused !== null ? (
        <div class="note warning" role="alert" tabIndex={-1} ref={refusedRef}>
          <p>
            <strong>{refused.message}</strong>
          </p>
          <p>Reload the page to see what the account's plan allows now.</p>
        </div>
      ) : (
        <form class="form" onSubmit={submit} noValidate>
          <div class="field">
            <label for="hook-url">Endpoint URL</label>
            <input
              id="hook-url"
              name="url"
              type="url"
              inputMode="url"
              required
              maxLength={2048}
              autoComplete="off"
              spellcheck={false}
              aria-invalid={fieldError('url') !== null}
              aria-describedby={described('url', true)}
              value={url}
              onInput={(e) => setUrl(e.currentTarget.value)}
            />
            {problem('url')}
            <p id="hook-url-hint" class="hint">
              Where ipokit POSTs the events, e.g. https://example.com/hooks/ipo.
            </p>
          </div>
          <fieldset class="field" aria-describedby={described('events', false)}>
            <legend>Events to send</legend>
            <EventChecks idPrefix="hook-event" value={events} onChange={setEvents} invalid={fieldError('events') !== null} />
            {problem('events')}
          </fieldset>
          <div class="field">
            <label for="hook-description">Description (optional)</label>
            <input
              id="hook-description"
              name="description"
              maxLength={200}
              autoComplete="off"
              aria-invalid={fieldError('description') !== null}
              aria-describedby={described('description', true)}
              value={description}
              onInput={(e) => setDescription(e.currentTarget.value)}
            />
            {problem('description')}
            <p id="hook-description-hint" class="hint">
              Up to 200 characters, e.g. "order book sync".
            </p>
          </div>
          <div class="form-actions">
            <button type="submit" class="button primary" aria-disabled={busy}>
              {busy ? 'Adding…' : 'Add endpoint'}
            </button>
          </div>
          {error !== null && error.field === null && <ErrorNote error={error.error} />}
        </form>
      )}
    </section>
  );
}

/**
 * A signing secret shown once, with Copy (focused): a new endpoint's, or a rotated one's with
 * until when the old secret still signs (`previousExpiresAt`, given only after a rotation).
 */
function SecretDialog({ url, secret, previousExpiresAt, onClose }: { url: string; secret: string; previousExpiresAt?: string | null; onClose: () => void }) {
  const rotated = previousExpiresAt !== undefined;
  const overlapEnds = previousExpiresAt === null || previousExpiresAt === undefined || Date.parse(previousExpiresAt) <= Date.now() ? null : previousExpiresAt;
  return (
    <Dialog title={rotated ? "Your endpoint's new signing secret" : "Your endpoint's signing secret"} onClose={onClose} wide>
      <p class="note warning">
        <strong>Copy it now:</strong> this is the only time the secret is shown.{' '}
        {rotated ? 'If it is lost, rotate the secret again.' : 'If it is lost, rotate the secret for a new one.'}
      </p>
      <p>
        Endpoint:{' '}
        <code>
          <Url url={url} />
        </code>
      </p>
      <CopyField id="new-secret" label="Signing secret" value={secret} what="secret" />
      {rotated && (
        <p class="previous-secret">
          {overlapEnds === null ? (
            <>The old secret no longer signs deliveries: update your receiver now.</>
          ) : (
            <>
              The old secret keeps working until <Time iso={overlapEnds} />: until then each delivery carries both signatures, so your receiver may switch to the new one at any
              time before.
            </>
          )}
        </p>
      )}
      {!rotated && (
        <>
          <h3>How your receiver checks a delivery</h3>
          <p class="small">
            Each delivery follows Standard Webhooks (standardwebhooks.com): a POST of JSON with the headers <code>webhook-id</code>, <code>webhook-timestamp</code> and{' '}
            <code>webhook-signature</code>. The signature is <code>v1,</code> and the base64 HMAC-SHA256 of <code>{'{id}.{timestamp}.{body}'}</code>, keyed by the bytes that the
            base64 after <code>whsec_</code> encodes. Any Standard Webhooks library checks it, e.g. <code>new Webhook(secret).verify(body, headers)</code>; keep the raw body, refuse
            an old timestamp, and skip a <code>webhook-id</code> already handled (a delivery may come twice).
          </p>
        </>
      )}
      <div class="dialog-actions">
        <button type="button" class="button" onClick={onClose}>
          Done
        </button>
      </div>
    </Dialog>
  );
}

/** The overlap choices of a secret rotation, in seconds: 24 hours unless chosen otherwise. */
const OVERLAPS: ReadonlyArray<{ seconds: number; label: string }> = [
  { seconds: 3600, label: '1 hour' },
  { seconds: 86_400, label: '24 hours' },
  { seconds: 604_800, label: '7 days' },
  { seconds: 0, label: 'None: the old secret stops now' },
];

function RotateSecretDialog({ target, onClose, onDone }: { target: Webhook; onClose: () => void; onDone: (result: RotatedSecret) => void }) {
  const [overlap, setOverlap] = useState(86_400);
  const { busy, error, run } = useAction();
  const rotate = () => run(async () => onDone(await call<RotatedSecret>(`webhooks/${encodeURIComponent(target.id)}/rotate-secret`, { method: 'POST', body: { overlapSeconds: overlap } })));
  return (
    <Dialog title="Rotate the signing secret?" onClose={onClose}>
      <p>
        <code>
          <Url url={target.url} />
        </code>
      </p>
      <p>A new secret signs every delivery from now on. The old one can keep signing beside it for a while, so that your receiver can switch over without missing one.</p>
      <fieldset class="field overlap">
        <legend>Keep the old secret working for</legend>
        {OVERLAPS.map((o, i) => (
          <label class="check" key={o.seconds}>
            <input type="radio" name="overlap" value={String(o.seconds)} checked={overlap === o.seconds} data-autofocus={i === 1 ? true : undefined} onChange={() => setOverlap(o.seconds)} />
            <span>{o.label}</span>
          </label>
        ))}
      </fieldset>
      {error !== null && <ErrorNote error={error} />}
      <div class="dialog-actions">
        <button type="button" class="button" onClick={onClose}>
          Cancel
        </button>
        <button type="button" class="button primary" onClick={rotate} aria-disabled={busy}>
          {busy ? 'Rotating…' : 'Rotate secret'}
        </button>
      </div>
    </Dialog>
  );
}

function EditEventsDialog({ target, onClose, onDone }: { target: Webhook; onClose: () => void; onDone: (hook: Webhook) => void }) {
  const [events, setEvents] = useState<EventType[]>(EVENT_TYPES.filter((t) => target.events.includes(t)));
  const { busy, error, setError, run } = useAction();
  const save = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    if (events.length === 0) {
      setError(new ApiError(400, 'ERR:BADPARAM', 'Choose at least one event type.'));
      setTimeout(() => document.getElementById('edit-event-0')?.focus());
      return;
    }
    await run(async () => onDone((await call<{ webhook: Webhook }>(`webhooks/${encodeURIComponent(target.id)}/update`, { method: 'POST', body: { events } })).webhook));
  };
  return (
    <Dialog title="Edit event types" onClose={onClose} wide>
      <p>
        <code>
          <Url url={target.url} />
        </code>
      </p>
      <form onSubmit={save} noValidate>
        <fieldset class="field" aria-describedby={error !== null ? 'edit-events-error' : undefined}>
          <legend>Events to send</legend>
          <EventChecks idPrefix="edit-event" value={events} onChange={setEvents} invalid={error?.status === 400} autofocus />
        </fieldset>
        <p class="hint">New events go out by this list; deliveries already made are kept.</p>
        {error !== null &&
          (error.status === 400 ? (
            <p id="edit-events-error" class="field-error" role="alert">
              {error.message}
            </p>
          ) : (
            <ErrorNote error={error} />
          ))}
        <div class="dialog-actions">
          <button type="button" class="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="button primary" aria-disabled={busy}>
            {busy ? 'Saving…' : 'Save'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function DeleteDialog({ target, onClose, onDone }: { target: Webhook; onClose: () => void; onDone: () => void }) {
  return (
    <ConfirmDialog title="Delete this endpoint?" action="Delete" doing="Deleting…" path={`webhooks/${encodeURIComponent(target.id)}/delete`} onClose={onClose} onDone={onDone}>
      <p>
        <code>
          <Url url={target.url} />
        </code>
      </p>
      <p>Nothing more is sent to it, and its deliveries are deleted with it. This cannot be undone.</p>
    </ConfirmDialog>
  );
}
