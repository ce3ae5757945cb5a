import { useRef, useState } from 'preact/hooks';
import { ApiError, call, EVENT_TYPES, toApiError, type CreatedWebhook, type EventType, type Webhook } from '../api.js';
import { useLoad } from '../hooks.js';
import { href } from '../route.js';
import { CopyField, Dialog, ErrorNote, Loading, PageTitle, Time } from '../ui.js';

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

export function WebhooksPage() {
  const hooks = useLoad((signal) => call<{ webhooks: Webhook[] }>('webhooks', { signal }), []);
  const [created, setCreated] = useState<CreatedWebhook | null>(null);
  const [deleting, setDeleting] = useState<Webhook | null>(null);
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
            <h2 id="hooks-heading">Your endpoints</h2>
            {hooks.error !== undefined && <ErrorNote error={hooks.error} onRetry={hooks.reload} />}
            {hooks.data === undefined ? (
              hooks.error === undefined && <Loading />
            ) : hooks.data.webhooks.length === 0 ? (
              <p>This account has no endpoints yet.</p>
            ) : (
              <ul class="hooks">
                {hooks.data.webhooks.map((hook) => (
                  <HookItem key={hook.id} hook={hook} onDelete={setDeleting} />
                ))}
              </ul>
            )}
          </section>
          <CreateWebhookForm
            onCreated={(hook) => {
              setCreated(hook);
              hooks.reload();
            }}
          />
        </>
      )}
      {created !== null && <NewSecretDialog created={created} onClose={() => setCreated(null)} />}
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
    </>
  );
}

/** The endpoint's state: a badge, and since when it is disabled. */
export function HookState({ hook }: { hook: Webhook }) {
  return hook.disabledAt === null ? (
    <span class="state active">enabled</span>
  ) : (
    <>
      <span class="state revoked">disabled</span> <span class="small">since <Time iso={hook.disabledAt} /></span>
    </>
  );
}

function HookItem({ hook, onDelete }: { hook: Webhook; onDelete: (hook: Webhook) => void }) {
  return (
    <li class={hook.disabledAt === null ? 'card hook' : 'card hook inactive'}>
      <h3 class="hook-url mono" title={hook.url}>
        <Url url={hook.url} />
      </h3>
      {hook.description !== null && hook.description !== '' && <p class="hook-desc">{hook.description}</p>}
      <dl class="facts">
        <dt>State</dt>
        <dd>
          <HookState hook={hook} />
          {hook.disabledAt !== null && <span class="hint wide">Its deliveries failed for 5 days, so nothing is sent to it any more: add a new endpoint to start again.</span>}
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
      <div class="form-actions">
        <a class="button small" href={href(`/webhooks/${encodeURIComponent(hook.id)}`)}>
          Deliveries<span class="sr-only"> to {hook.url}</span>
        </a>
        <button type="button" class="button small danger" onClick={() => onDelete(hook)}>
          Delete<span class="sr-only"> the endpoint {hook.url}</span>
        </button>
      </div>
    </li>
  );
}

function CreateWebhookForm({ onCreated }: { onCreated: (hook: CreatedWebhook) => void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<EventType[]>([...EVENT_TYPES]);
  const [description, setDescription] = useState('');
  const [busy, setBusy] = useState(false);
  /** A message about one field, shown next to it; or about the form, below it. */
  const [error, setError] = useState<{ field: FieldName | null; error: ApiError } | null>(null);
  /** The plan's refusal (403): it replaces the form. */
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
            {refused.message.startsWith('Webhooks need') ? (
              <strong>{refused.message}</strong>
            ) : (
              <>
                <strong>Webhooks need the pro plan.</strong> {refused.message}
              </>
            )}
          </p>
          <p>This account's plan does not include webhook endpoints: once the plan does, add them here.</p>
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
            <ul class="event-checks">
              {EVENT_TYPES.map((type, i) => (
                <li key={type}>
                  <label class="check">
                    <input
                      id={`hook-event-${i}`}
                      type="checkbox"
                      name="events"
                      value={type}
                      checked={events.includes(type)}
                      aria-invalid={fieldError('events') !== null}
                      onChange={(e) => {
                        const on = e.currentTarget.checked;
                        setEvents((now) => EVENT_TYPES.filter((t) => (t === type ? on : now.includes(t))));
                      }}
                    />
                    <span>
                      <code>{type}</code> <span class="muted small">{EVENT_HINTS[type]}</span>
                    </span>
                  </label>
                </li>
              ))}
            </ul>
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

function NewSecretDialog({ created, onClose }: { created: CreatedWebhook; onClose: () => void }) {
  return (
    <Dialog title="Your endpoint's signing secret" onClose={onClose} wide>
      <p class="note warning">
        <strong>Copy it now:</strong> this is the only time the secret is shown. If it is lost, delete the endpoint and add it again for a new secret.
      </p>
      <p>
        Endpoint:{' '}
        <code>
          <Url url={created.url} />
        </code>
      </p>
      <CopyField id="new-secret" label="Signing secret" value={created.secret} what="secret" />
      <h3>How your receiver checks a delivery</h3>
      <p class="small">
        Each delivery follows Standard Webhooks (standardwebhooks.com): a POST of JSON with the headers <code>webhook-id</code>, <code>webhook-timestamp</code> and{' '}
        <code>webhook-signature</code>. The signature is <code>v1,</code> and the base64 HMAC-SHA256 of <code>{'{id}.{timestamp}.{body}'}</code>, keyed by the bytes that the base64
        after <code>whsec_</code> encodes. Any Standard Webhooks library checks it, e.g. <code>new Webhook(secret).verify(body, headers)</code>; keep the raw body, refuse an old
        timestamp, and skip a <code>webhook-id</code> already handled (a delivery may come twice).
      </p>
      <div class="dialog-actions">
        <button type="button" class="button" onClick={onClose}>
          Done
        </button>
      </div>
    </Dialog>
  );
}

function DeleteDialog({ target, onClose, onDone }: { target: Webhook; onClose: () => void; onDone: () => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const remove = async () => {
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      await call<undefined>(`webhooks/${encodeURIComponent(target.id)}/delete`, { method: 'POST', body: {} });
      onDone();
    } catch (err) {
      setError(toApiError(err));
      setBusy(false);
    }
  };
  return (
    <Dialog title="Delete this endpoint?" onClose={onClose}>
      <p>
        <code>
          <Url url={target.url} />
        </code>
      </p>
      <p>Nothing more is sent to it, and its deliveries are deleted with it. This cannot be undone.</p>
      {error !== null && <ErrorNote error={error} />}
      <div class="dialog-actions">
        <button type="button" class="button" data-autofocus onClick={onClose}>
          Cancel
        </button>
        <button type="button" class="button danger-solid" onClick={remove} aria-disabled={busy}>
          {busy ? 'Deleting…' : 'Delete'}
        </button>
      </div>
    </Dialog>
  );
}
