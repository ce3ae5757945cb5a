import { useState } from 'preact/hooks';
import { ApiError, call, type CreatedKey, type Key, type Plan } from '../api.js';
import { useAction, useLoad } from '../hooks.js';
import { ConfirmDialog, CopyField, Dialog, ErrorNote, Loading, PageTitle, Time } from '../ui.js';

type KeyState = 'active' | 'expired' | 'revoked';

export function KeysPage({ plan }: { plan: Plan | undefined }) {
  const keys = useLoad((signal) => call<{ keys: Key[] }>('keys', { signal }), []);
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [revoking, setRevoking] = useState<Key | null>(null);
  const [rotating, setRotating] = useState<Key | null>(null);
  const showNew = (key: CreatedKey) => {
    setCreated(key);
    keys.reload();
  };
  return (
    <>
      <PageTitle>API keys</PageTitle>
      <p class="lead">
        Apps send a key in the <code>x-api-key</code> header. Every key of the account shares its plan and rate limits.
        {plan === 'free' && ' The free plan holds one active key (two only while a rotation overlaps).'}
      </p>
      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading">Your keys</h2>
        {keys.error !== undefined && <ErrorNote error={keys.error} onRetry={keys.reload} />}
        {keys.data === undefined ? (
          keys.error === undefined && <Loading />
        ) : keys.data.keys.length === 0 ? (
          <p>This account has no keys yet: create one below.</p>
        ) : (
          <KeyTable keys={keys.data.keys} onRevoke={setRevoking} onRotate={setRotating} />
        )}
      </section>
      <CreateKeyForm onCreated={showNew} />
      {created !== null && <NewKeyDialog created={created} onClose={() => setCreated(null)} />}
      {revoking !== null && (
        <RevokeDialog
          target={revoking}
          onClose={() => setRevoking(null)}
          onDone={() => {
            setRevoking(null);
            keys.reload();
          }}
        />
      )}
      {rotating !== null && (
        <RotateDialog
          target={rotating}
          onClose={() => setRotating(null)}
          onDone={(key) => {
            setRotating(null);
            showNew(key);
          }}
        />
      )}
    </>
  );
}

function stateOf(key: Key, now: number): KeyState {
  if (key.revokedAt !== null) return 'revoked';
  if (key.expiresAt !== null && Date.parse(key.expiresAt) <= now) return 'expired';
  return 'active';
}

function KeyTable({ keys, onRevoke, onRotate }: { keys: Key[]; onRevoke: (key: Key) => void; onRotate: (key: Key) => void }) {
  const now = Date.now();
  // A rotated key names the one it replaced by that key's prefix, the part its owner knows.
  const prefixes = new Map(keys.map((k) => [k.id, k.prefix]));
  return (
    <table class="keys stack">
      <thead>
        <tr>
          <th scope="col">Label</th>
          <th scope="col">Prefix</th>
          <th scope="col">State</th>
          <th scope="col">Created</th>
          <th scope="col">Expires</th>
          <th scope="col">Last used</th>
          <th scope="col">Actions</th>
        </tr>
      </thead>
      <tbody>
        {keys.map((key) => {
          const state = stateOf(key, now);
          return (
            <tr key={key.id} class={state === 'active' ? undefined : 'inactive'}>
              <th scope="row" data-label="Label">
                {key.label}
              </th>
              <td data-label="Prefix">
                <code>{key.prefix}…</code>
              </td>
              <td data-label="State">
                <span class={`state ${state}`}>{state}</span>
                {key.revokedAt !== null && (
                  <span class="muted small">
                    {' '}
                    <Time iso={key.revokedAt} />
                  </span>
                )}
              </td>
              <td data-label="Created">
                <Time iso={key.createdAt} />
                {key.rotatedFrom !== null && <RotatedFrom prefix={prefixes.get(key.rotatedFrom)} />}
              </td>
              <td data-label="Expires">
                <Time iso={key.expiresAt} empty="Never" />
              </td>
              <td data-label="Last used">
                <Time iso={key.lastUsedAt} empty="Never" />
              </td>
              <td data-label="Actions" class={state === 'active' ? 'actions' : 'actions none'}>
                {state === 'active' ? (
                  <>
                    <button type="button" class="button small" onClick={() => onRotate(key)}>
                      Rotate<span class="sr-only"> key {key.label} ({key.prefix}…)</span>
                    </button>
                    <button type="button" class="button small danger" onClick={() => onRevoke(key)}>
                      Revoke<span class="sr-only"> key {key.label} ({key.prefix}…)</span>
                    </button>
                  </>
                ) : (
                  <span class="muted">None</span>
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** Under a rotated key's creation time: the key it replaced (not a `code`, which names a key's own row). */
function RotatedFrom({ prefix }: { prefix: string | undefined }) {
  return (
    <>
      <br />
      <span class="muted small">rotated from {prefix === undefined ? 'an earlier key' : <span class="mono nowrap">{prefix}…</span>}</span>
    </>
  );
}

function CreateKeyForm({ onCreated }: { onCreated: (key: CreatedKey) => void }) {
  const [label, setLabel] = useState('');
  const [expiry, setExpiry] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    // aria-disabled rather than disabled while busy: a disabled button drops focus, and the new key's dialog hands focus back to it.
    if (busy) return;
    const length = [...label].length;
    if (label.trim() === '' || length > 100) {
      setError(new ApiError(400, 'ERR:BADPARAM', 'Give the key a label of 1 to 100 characters, e.g. "production server".'));
      return;
    }
    let expiresAt: string | undefined;
    if (expiry !== '') {
      // A datetime-local value has no zone: it is read in IST, as every time on these pages is shown (the hint says so).
      const at = new Date(`${expiry.length === 16 ? `${expiry}:00` : expiry}+05:30`);
      if (Number.isNaN(at.getTime()) || at.getTime() <= Date.now()) {
        setError(new ApiError(400, 'ERR:BADPARAM', 'The expiry must be a date and time in the future, or empty for a key that never expires.'));
        return;
      }
      expiresAt = at.toISOString();
    }
    setBusy(true);
    setError(null);
    try {
      const { key } = await call<{ key: CreatedKey }>('keys', { method: 'POST', body: expiresAt === undefined ? { label } : { label, expiresAt } });
      setLabel('');
      setExpiry('');
      onCreated(key);
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, 'ERR:CLIENT', String(err)));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="create-heading" class="card create-key">
      <h2 id="create-heading">Create a key</h2>
      <form class="form" onSubmit={submit} noValidate>
        <div class="field">
          <label for="key-label">Label</label>
          <input
            id="key-label"
            name="label"
            required
            maxLength={100}
            autoComplete="off"
            aria-describedby="key-label-hint"
            value={label}
            onInput={(e) => setLabel(e.currentTarget.value)}
          />
          <p id="key-label-hint" class="hint">
            1 to 100 characters, e.g. "production server".
          </p>
        </div>
        <div class="field">
          <label for="key-expiry">Expires (optional)</label>
          <input id="key-expiry" name="expiresAt" type="datetime-local" aria-describedby="key-expiry-hint" value={expiry} onInput={(e) => setExpiry(e.currentTarget.value)} />
          <p id="key-expiry-hint" class="hint">
            In India's time (IST). Empty: the key never expires.
          </p>
        </div>
        <div class="form-actions">
          <button type="submit" class="button primary" aria-disabled={busy}>
            {busy ? 'Creating…' : 'Create key'}
          </button>
        </div>
        {error !== null && <ErrorNote error={error} />}
      </form>
    </section>
  );
}

function NewKeyDialog({ created, onClose }: { created: CreatedKey; onClose: () => void }) {
  return (
    <Dialog title="Your new API key" onClose={onClose} wide>
      <p class="note warning">
        <strong>Copy it now:</strong> this is the only time the whole key is shown. It cannot be shown again; if it is lost, rotate or revoke it and create another.
      </p>
      <CopyField id="new-key" label={`API key "${created.label}"`} value={created.key} what="key" />
      {created.expiresAt !== null && (
        <p>
          It expires <Time iso={created.expiresAt} />.
        </p>
      )}
      <div class="dialog-actions">
        <button type="button" class="button" onClick={onClose}>
          Done
        </button>
      </div>
    </Dialog>
  );
}

function RevokeDialog({ target, onClose, onDone }: { target: Key; onClose: () => void; onDone: () => void }) {
  return (
    <ConfirmDialog title={`Revoke the key "${target.label}"?`} action="Revoke" doing="Revoking…" path={`keys/${encodeURIComponent(target.id)}/revoke`} onClose={onClose} onDone={onDone}>
      <p>
        Every app that sends <code>{target.prefix}…</code> is refused from now on. This cannot be undone.
      </p>
    </ConfirmDialog>
  );
}

const OVERLAPS: ReadonlyArray<{ seconds: number; label: string }> = [
  { seconds: 0, label: 'No overlap: the old key stops now' },
  { seconds: 3600, label: '1 hour' },
  { seconds: 86_400, label: '1 day' },
  { seconds: 604_800, label: '7 days' },
];

function RotateDialog({ target, onClose, onDone }: { target: Key; onClose: () => void; onDone: (key: CreatedKey) => void }) {
  const [overlap, setOverlap] = useState(86_400);
  const { busy, error, run } = useAction();
  const rotate = () => run(async () => onDone((await call<{ key: CreatedKey }>(`keys/${encodeURIComponent(target.id)}/rotate`, { method: 'POST', body: { overlapSeconds: overlap } })).key));
  return (
    <Dialog title={`Rotate the key "${target.label}"`} onClose={onClose}>
      <p>
        A new key with the same label replaces <code>{target.prefix}…</code>. The old key keeps working for the overlap you choose, so that your apps can switch over.
        {target.expiresAt !== null && (
          <>
            {' '}
            The new key expires when this one would have, <Time iso={target.expiresAt} />: rotating never extends a key's life.
          </>
        )}
      </p>
      <div class="field">
        <label for="rotate-overlap">Keep the old key working for</label>
        <select id="rotate-overlap" data-autofocus value={String(overlap)} onChange={(e) => setOverlap(Number(e.currentTarget.value))}>
          {OVERLAPS.map((o) => (
            <option key={o.seconds} value={String(o.seconds)}>
              {o.label}
            </option>
          ))}
        </select>
      </div>
      {error !== null && <ErrorNote error={error} />}
      <div class="dialog-actions">
        <button type="button" class="button" onClick={onClose}>
          Cancel
        </button>
        <button type="button" class="button primary" onClick={rotate} aria-disabled={busy}>
          {busy ? 'Rotating…' : 'Rotate'}
        </button>
      </div>
    </Dialog>
  );
}
