import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, isAbort, toApiError } from './api.js';

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  /** `performance.now()` when `data` arrived, so countdowns can be kept from it. */
  at: number;
  reload: () => void;
}

/**
 * Runs `load` whenever `deps` change (aborting the previous call) and on `reload()`. The last
 * data stays shown while a new call runs, so a refresh does not blank the page.
 */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<Omit<Loaded<T>, 'reload'>>({ data: undefined, error: undefined, loading: true, at: 0 });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    load(controller.signal).then(
      (data) => setState({ data, error: undefined, loading: false, at: performance.now() }),
      (err: unknown) => {
        if (isAbort(err)) return;
        const error = err instanceof ApiError ? err : new ApiError(0, 'ERR:CLIENT', err instanceof Error ? err.message : String(err));
        setState((s) => ({ ...s, error, loading: false }));
      },
    );
    return () => controller.abort();
    // `load` is a new function on every render; `deps` say when it means something new.
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** `performance.now()`, refreshed every `ms` while the component is shown. */
export function useNow(ms = 1000): number {
  const [now, setNow] = useState(() => performance.now());
  useEffect(() => {
    const timer = window.setInterval(() => setNow(performance.now()), ms);
    return () => window.clearInterval(timer);
  }, [ms]);
  return now;
}

/** The width of an element in CSS pixels, following resizes. */
export function useWidth<E extends HTMLElement>(): [ref: { current: E | null }, width: number] {
  const ref = useRef<E>(null);
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const el = ref.current;
    if (el === null) return;
    setWidth(el.clientWidth);
    const observer = new ResizeObserver(() => setWidth(el.clientWidth));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}

/** Whether the page is in dark mode now (follows the system setting as it changes). */
export function useDark(): boolean {
  const [dark, setDark] = useState(() => matchMedia('(prefers-color-scheme: dark)').matches);
  useEffect(() => {
    const query = matchMedia('(prefers-color-scheme: dark)');
    const update = () => setDark(query.matches);
    query.addEventListener('change', update);
    return () => query.removeEventListener('change', update);
  }, []);
  return dark;
}

/** What {@link useAction} gives a dialog: whether its action runs, its last error, and the runner. */
export interface Action {
  busy: boolean;
  error: ApiError | null;
  setError: (error: ApiError | null) => void;
  /** Runs `task` unless one runs already: busy meanwhile; a failure is kept as `error` and frees the dialog again. */
  run: (task: () => Promise<void>) => Promise<void>;
}

/**
 * A dialog's one action (revoke, rotate, delete, save): a second click while it runs does
 * nothing; on success the dialog stays busy, as its `onDone` closes it.
 */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const run = async (task: () => Promise<void>) => {
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      await task();
    } catch (err) {
      setError(toApiError(err));
      setBusy(false);
    }
  };
  return { busy, error, setError, run };
}
