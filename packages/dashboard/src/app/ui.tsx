import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { call, type ApiError } from './api.js';
import { formatInstant } from './format.js';
import { useAction } from './hooks.js';

/** An error near the action that caused it; `role="alert"` so that screen readers say it at once. */
export function ErrorNote({ error, onRetry }: { error: ApiError; onRetry?: () => void }) {
  return (
    <div class="note error" role="alert">
      <p>
        {error.status === 429 ? (
          <>
            Too many requests: a rate-limit window of this account is full.
            {error.retryAfter !== null && ` Retry in ${error.retryAfter} s.`}
          </>
        ) : (
          error.message
        )}
      </p>
      {onRetry !== undefined && (
        <button type="button" class="button" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p class="muted" role="status">
      {label}
    </p>
  );
}

export function Time({ iso, empty = '—' }: { iso: string | null; empty?: string }) {
  return iso === null ? <span class="muted">{empty}</span> : <time dateTime={iso}>{formatInstant(iso)}</time>;
}

/**
 * A table that scrolls inside its own box on narrow screens; the box is focusable so the keyboard
 * can scroll it. `cards`: its table turns into cards on a phone (`table.stack`), so the box drops
 * its frame there.
 */
export function TableBox({ label, children, cards = false }: { label: string; children: ComponentChildren; cards?: boolean }) {
  return (
    // A focusable region is how keyboard users scroll a box without controls in it.
    <div class={cards ? 'table-box cards' : 'table-box'} role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

export function PageTitle({ children }: { children: ComponentChildren }) {
  // Focused on every page change (tabIndex -1), so that a screen reader starts at the new page.
  return (
    <h1 id="page-title" tabIndex={-1}>
      {children}
    </h1>
  );
}

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/**
 * A modal `<dialog>`: the rest of the page is inert while it is open, Tab and Shift+Tab cycle
 * through its controls, Escape closes it, and focus goes back where it was when it closes.
 * Mount it to open it; `onClose` unmounts it.
 */
export function Dialog({ title, onClose, children, wide = false }: { title: string; onClose: () => void; children: ComponentChildren; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const closeRef = useRef(onClose);
  closeRef.current = onClose;
  useEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    dialog.showModal();
    dialog.querySelector<HTMLElement>('[data-autofocus]')?.focus();
    return () => {
      if (dialog.open) dialog.close();
      // The opener may be gone (a revoked key loses its buttons): then start again at the page title.
      const back = opener?.isConnected === true ? opener : document.getElementById('page-title');
      back?.focus();
    };
  }, []);
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== 'Tab' || ref.current === null) return;
    const items = [...ref.current.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => el.getClientRects().length > 0);
    const first = items[0];
    const last = items[items.length - 1];
    if (first === undefined || last === undefined) return;
    const active = document.activeElement;
    if (event.shiftKey && (active === first || !ref.current.contains(active))) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && (active === last || !ref.current.contains(active))) {
      event.preventDefault();
      first.focus();
    }
  };
  return (
    <dialog
      ref={ref}
      class={wide ? 'dialog wide' : 'dialog'}
      aria-labelledby={titleId}
      onKeyDown={onKeyDown}
      onCancel={(event) => {
        // Escape: let the parent unmount it, so its state and the DOM agree.
        event.preventDefault();
        closeRef.current();
      }}
      onClose={() => closeRef.current()}
    >
      <h2 id={titleId}>{title}</h2>
      {children}
    </dialog>
  );
}

/**
 * A dialog that asks before an action that cannot be undone (revoke a key, delete an
 * endpoint): Cancel is focused first; the action POSTs `{}` to `path` (under the account
 * router) and calls `onDone`, or shows the error beside the buttons.
 */
export function ConfirmDialog({ title, action, doing, path, onClose, onDone, children }: { title: string; action: string; doing: string; path: string; onClose: () => void; onDone: () => void; children: ComponentChildren }) {
  const { busy, error, run } = useAction();
  const confirm = () =>
    run(async () => {
      await call<undefined>(path, { method: 'POST', body: {} });
      onDone();
    });
  return (
    <Dialog title={title} onClose={onClose}>
      {children}
      {error !== null && <ErrorNote error={error} />}
      <div class="dialog-actions">
        <button type="button" class="button" data-autofocus onClick={onClose}>
          Cancel
        </button>
        <button type="button" class="button danger-solid" onClick={confirm} aria-disabled={busy}>
          {busy ? doing : action}
        </button>
      </div>
    </Dialog>
  );
}

/**
 * A secret shown once: a read-only field and a Copy button (focused when its dialog opens).
 * Without the clipboard API (plain http), Copy selects the text for Ctrl+C instead.
 */
export function CopyField({ id, label, value, what }: { id: string; label: ComponentChildren; value: string; what: string }) {
  const [copied, setCopied] = useState<'yes' | 'select' | null>(null);
  const copy = async () => {
    const field = document.getElementById(id) as HTMLInputElement | null;
    try {
      // The clipboard API exists only in secure contexts (https, localhost); elsewhere the text is selected for Ctrl+C.
      if (navigator.clipboard === undefined) throw new Error('no clipboard');
      await navigator.clipboard.writeText(value);
      setCopied('yes');
    } catch {
      field?.focus();
      field?.select();
      setCopied('select');
    }
  };
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <div class="copy-row">
        <input id={id} class="mono" readOnly value={value} onFocus={(e) => e.currentTarget.select()} />
        <button type="button" class="button primary" data-autofocus onClick={copy}>
          Copy
        </button>
      </div>
      <p class="hint" aria-live="polite">
        {copied === 'yes' ? 'Copied to the clipboard.' : copied === 'select' ? `The ${what} is selected: press Ctrl+C (⌘C on a Mac) to copy it.` : ''}
      </p>
    </div>
  );
}
