import { useEffect, useRef, useState } from 'preact/hooks';
import { call, isAbort, toApiError, type ApiError, type Delivery, type DeliveryWithPayload, type WebhookList } from '../api.js';
import { prettyJson } from '../format.js';
import { useLoad } from '../hooks.js';
import { Dialog, ErrorNote, Loading, PageTitle, Time } from '../ui.js';
import { deliveriesHref, HookState, unavailable, Url } from './webhooks.js';

/** Deliveries asked for at a time. */
const PAGE = 20;

interface Deliveries {
  /** Newest first: the pages loaded so far, with replays put on top. */
  list: Delivery[] | undefined;
  /** Whether the last page was full, so that older deliveries may follow. */
  more: boolean;
  loading: 'first' | 'more' | null;
  error: ApiError | null;
}

/**
 * `#/webhooks/{id}`: an endpoint's deliveries, newest first, 20 at a time, each with Details and
 * Replay; `#/webhooks/{id}?delivery={deliveryId}` opens one delivery's detail over the list.
 */
export function DeliveriesPage({ id, deliveryId }: { id: string; deliveryId: string | null }) {
  const path = `webhooks/${encodeURIComponent(id)}`;
  const hooks = useLoad((signal) => call<WebhookList>('webhooks', { signal }), []);
  const hook = hooks.data?.webhooks.find((w) => w.id === id);
  const [state, setState] = useState<Deliveries>({ list: undefined, more: false, loading: 'first', error: null });
  const [replaying, setReplaying] = useState<string | null>(null);
  const [said, setSaid] = useState('');
  const [replayError, setReplayError] = useState<ApiError | null>(null);
  const controller = useRef<AbortController | null>(null);

  /** The first page afresh (`before` undefined), or the page after the last delivery shown. */
  const load = async (before?: string) => {
    controller.current?.abort();
    const c = new AbortController();
    controller.current = c;
    setState((s) => ({ ...s, loading: before === undefined ? 'first' : 'more', error: null }));
    try {
      const q = new URLSearchParams({ limit: String(PAGE) });
      if (before !== undefined) q.set('before', before);
      const { deliveries } = await call<{ deliveries: Delivery[] }>(`${path}/deliveries?${q}`, { signal: c.signal });
      setState((s) => ({ list: before === undefined ? deliveries : [...(s.list ?? []), ...deliveries], more: deliveries.length === PAGE, loading: null, error: null }));
      if (before !== undefined) setSaid(deliveries.length === 0 ? 'No older deliveries.' : `${deliveries.length} older ${deliveries.length === 1 ? 'delivery' : 'deliveries'} added below.`);
    } catch (err) {
      if (!isAbort(err)) setState((s) => ({ ...s, loading: null, error: toApiError(err) }));
    }
  };
  useEffect(() => {
    void load();
    return () => controller.current?.abort();
  }, [path]);

  const replay = async (d: Delivery) => {
    if (replaying !== null) return;
    setReplaying(d.id);
    setReplayError(null);
    setSaid('');
    try {
      const { delivery } = await call<{ delivery: Delivery }>(`${path}/deliveries/${encodeURIComponent(d.id)}/replay`, { method: 'POST', body: {} });
      if (delivery.id === d.id || (state.list ?? []).some((x) => x.id === delivery.id)) {
        // (a delivery of this event still pending, this one or an earlier replay: the API adds nothing and answers with it as it is)
        setState((s) => ({ ...s, list: (s.list ?? []).map((x) => (x.id === delivery.id ? delivery : x)) }));
        setSaid(`A delivery of this event is still pending: it is sent when it is due, so nothing was added.`);
      } else {
        setState((s) => ({ ...s, list: [delivery, ...(s.list ?? []).filter((x) => x.id !== delivery.id)] }));
        setSaid(`Replayed: a new pending delivery of ${delivery.eventType} is at the top of the list.`);
      }
    } catch (err) {
      setReplayError(toApiError(err));
    } finally {
      setReplaying(null);
    }
  };

  const { list, more, loading, error } = state;
  const last = list?.[list.length - 1];
  return (
    <>
      <p class="crumb">
        <a href="#/webhooks">← Webhooks</a>
      </p>
      <PageTitle>Deliveries</PageTitle>
      {hook !== undefined && (
        <div class="hook-summary">
          <p class="hook-url mono" title={hook.url}>
            <Url url={hook.url} />
          </p>
          <p>
            <HookState hook={hook} />
            {hook.description !== null && hook.description !== '' && <span class="muted"> · {hook.description}</span>}
          </p>
        </div>
      )}
      <section aria-labelledby="deliveries-heading">
        <div class="section-head">
          <h2 id="deliveries-heading">Latest deliveries</h2>
          <button type="button" class="button small" onClick={() => loading === null && void load()} aria-disabled={loading !== null}>
            Refresh
          </button>
        </div>
        <p class="hint">
          Newest first. A failed attempt is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h; Replay sends the event again now, as a new delivery with the same{' '}
          <code>webhook-id</code>.
        </p>
        <p class="hint said" role="status">
          {said}
        </p>
        {replayError !== null && <ErrorNote error={replayError} />}
        {error === null ? null : error.status === 404 ? (
          <div class="note" role="alert">
            <p>
              {unavailable(hooks.error) ? 'Webhooks are not available here: the server of this dashboard keeps no webhook endpoints.' : 'This account has no such endpoint: it may have been deleted.'}{' '}
              <a href="#/webhooks">See your endpoints</a>.
            </p>
          </div>
        ) : (
          <ErrorNote error={error} onRetry={() => void load(list === undefined ? undefined : last?.id)} />
        )}
        {list === undefined ? (
          error === null && <Loading />
        ) : list.length === 0 ? (
          <p>No deliveries yet: one is made for every event this endpoint takes.</p>
        ) : (
          <DeliveryTable hookId={id} list={list} replaying={replaying} canReplay={hook?.disabledAt == null} onReplay={replay} />
        )}
        {list !== undefined && list.length > 0 && (
          <div class="pager">
            {more ? (
              <button type="button" class="button" onClick={() => loading === null && last !== undefined && void load(last.id)} aria-disabled={loading !== null}>
                {loading === 'more' ? 'Loading…' : 'Load more'}
              </button>
            ) : (
              <p class="muted">No older deliveries.</p>
            )}
          </div>
        )}
      </section>
      {deliveryId !== null && (
        <DeliveryDialog
          hookId={id}
          deliveryId={deliveryId}
          onClose={() => {
            // Back to the list; replace, so that Back does not open the detail again.
            location.replace(deliveriesHref(id));
          }}
        />
      )}
    </>
  );
}

function DeliveryTable({ hookId, list, replaying, canReplay, onReplay }: { hookId: string; list: Delivery[]; replaying: string | null; canReplay: boolean; onReplay: (d: Delivery) => void }) {
  return (
    <table class="deliveries stack" aria-labelledby="deliveries-heading">
      <thead>
        <tr>
          <th scope="col">Event</th>
          <th scope="col">State</th>
          <th scope="col">Attempts</th>
          <th scope="col">Last result</th>
          <th scope="col">Next attempt</th>
          <th scope="col">Actions</th>
        </tr>
      </thead>
      <tbody>
        {list.map((d) => (
          <tr key={d.id} data-id={d.id}>
            <th scope="row" data-label="Event">
              <code>{d.eventType}</code>
              <span class="muted small event-id">
                <span class="mono">{d.eventId}</span>
                <br />
                made <Time iso={d.createdAt} />
              </span>
            </th>
            <td data-label="State">
              <span class={`state ${d.state}`}>{d.state}</span>
            </td>
            <td data-label="Attempts" class="num">
              {d.attempts}
            </td>
            <td data-label="Last result" class="result">
              {d.lastStatus === null && d.lastError === null ? (
                <span class="muted">{d.attempts === 0 ? 'Not tried yet' : '—'}</span>
              ) : (
                <span>
                  {d.lastStatus !== null && <span class="mono">HTTP {d.lastStatus} </span>}
                  {d.lastError}
                  {d.lastAttemptAt !== null && (
                    <span class="muted small">
                      <span class="sr-only">at </span>
                      <Time iso={d.lastAttemptAt} />
                    </span>
                  )}
                </span>
              )}
            </td>
            <td data-label="Next attempt">
              <Time iso={d.nextAttemptAt} />
            </td>
            <td data-label="Actions" class="actions">
              <a class="button small" href={deliveriesHref(hookId, d.id)}>
                Details
                <span class="sr-only">
                  {' '}
                  of {d.eventType} {d.eventId}
                </span>
              </a>
              {canReplay && (
                // A pending delivery is sent when it is due: its replay would add nothing (the API answers it as it is).
                <button
                  type="button"
                  class="button small"
                  onClick={() => onReplay(d)}
                  disabled={d.state === 'pending'}
                  title={d.state === 'pending' ? 'Pending: it is sent when it is due' : undefined}
                  aria-disabled={replaying !== null && d.state !== 'pending' ? true : undefined}
                >
                  {replaying === d.id ? 'Replaying…' : 'Replay'}
                  <span class="sr-only">
                    {' '}
                    {d.eventType} {d.eventId}
                  </span>
                </button>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** One delivery: when, what was sent (the payload, byte for byte, indented when it is JSON), and what the receiver answered. */
function DeliveryDialog({ hookId, deliveryId, onClose }: { hookId: string; deliveryId: string; onClose: () => void }) {
  const detail = useLoad(
    (signal) => call<{ delivery: DeliveryWithPayload }>(`webhooks/${encodeURIComponent(hookId)}/deliveries/${encodeURIComponent(deliveryId)}`, { signal }),
    [hookId, deliveryId],
  );
  const d = detail.data?.delivery;
  return (
    <Dialog title={d === undefined ? 'Delivery' : `Delivery of ${d.eventType}`} onClose={onClose} wide>
      {detail.error !== undefined &&
        (detail.error.status === 404 ? (
          <div class="note" role="alert">
            <p>This endpoint has no such delivery: it may have been pruned, or the endpoint deleted.</p>
          </div>
        ) : (
          <ErrorNote error={detail.error} onRetry={detail.reload} />
        ))}
      {d === undefined ? detail.error === undefined && <Loading /> : <DeliveryBody d={d} />}
      <div class="dialog-actions">
        <button type="button" class="button" onClick={onClose}>
          Close
        </button>
      </div>
    </Dialog>
  );
}

function DeliveryBody({ d }: { d: DeliveryWithPayload }) {
  const payload = useRef<HTMLPreElement>(null);
  // Focus goes to the detail once it has come: its payload, which the keyboard can then scroll.
  useEffect(() => payload.current?.focus(), []);
  const r = d.response;
  return (
    <div class="delivery-detail">
      <dl class="facts">
        <dt>State</dt>
        <dd>
          <span class={`state ${d.state}`}>{d.state}</span>
        </dd>
        <dt>Event</dt>
        <dd>
          <code>{d.eventType}</code> <span class="mono small">{d.eventId}</span>
        </dd>
        <dt>Made</dt>
        <dd>
          <Time iso={d.createdAt} />
        </dd>
        <dt>Attempts</dt>
        <dd>
          {d.attempts}
          {d.lastAttemptAt !== null && (
            <span class="muted small">
              {' '}
              (last <Time iso={d.lastAttemptAt} />)
            </span>
          )}
        </dd>
        {d.nextAttemptAt !== null && (
          <>
            <dt>Next attempt</dt>
            <dd>
              <Time iso={d.nextAttemptAt} />
            </dd>
          </>
        )}
      </dl>
      <h3 id="payload-heading">What was sent</h3>
      <pre class="payload" ref={payload} tabIndex={0} role="region" aria-labelledby="payload-heading">
        {prettyJson(d.payload)}
      </pre>
      <h3 id="response-heading">What came back</h3>
      {r === null ? (
        <p class="response-none">{d.attempts === 0 ? 'Nothing yet: no attempt has been made.' : 'Nothing was kept of the last attempt.'}</p>
      ) : r.status === null ? (
        <p class="response-none">
          No HTTP answer{d.lastError === null ? '.' : `: ${d.lastError}`}
        </p>
      ) : (
        <>
          <p>
            <span class="mono response-status">HTTP {r.status}</span>
            {d.lastError !== null && <span> · {d.lastError}</span>}
          </p>
          {r.body === null || r.body === '' ? (
            <p class="muted">The answer had no body.</p>
          ) : (
            <>
              <pre class="payload response-body" tabIndex={0} role="region" aria-labelledby="response-heading">
                {prettyJson(r.body)}
              </pre>
              <p class="hint">The first 1 KB of the answer's body is kept.</p>
            </>
          )}
        </>
      )}
    </div>
  );
}
