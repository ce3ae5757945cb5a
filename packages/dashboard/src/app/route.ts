/**
 * Hash routes (`#/keys`, `#/ipos?status=open`, `#/ipos/ORBIT?interval=5m`): the server serves
 * one page whatever the route, so the route lives in the fragment, and filters live in its
 * query so that Back, reload and a shared link all show the same view.
 */
import { useEffect, useState } from 'preact/hooks';

export type Page = 'account' | 'keys' | 'usage' | 'ipos' | 'ipo' | 'webhooks' | 'webhook' | 'missing';

export interface Route {
  page: Page;
  /** The IPO identifier of `#/ipos/{id}`, the endpoint's of `#/webhooks/{id}`. */
  id: string;
  query: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const [path = '', search = ''] = hash.replace(/^#/, '').split('?', 2) as [string?, string?];
  const query = new URLSearchParams(search);
  const parts = path.split('/').filter((p) => p !== '');
  const [first, second] = parts;
  const route = (page: Page, id = ''): Route => ({ page, id, query });
  if (parts.length === 0) return route('account');
  if (parts.length === 1 && (first === 'keys' || first === 'usage' || first === 'ipos' || first === 'webhooks')) return route(first);
  if (parts.length === 2 && (first === 'ipos' || first === 'webhooks') && second !== undefined) {
    try {
      return route(first === 'ipos' ? 'ipo' : 'webhook', decodeURIComponent(second));
    } catch {
      return route('missing');
    }
  }
  return route('missing');
}

/** `#/path?query`, leaving out empty values. */
export function href(path: string, query: Record<string, string | number | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') q.set(name, String(value));
  const search = q.toString();
  return `#${path}${search === '' ? '' : `?${search}`}`;
}

export function navigate(path: string, query: Record<string, string | number | undefined> = {}): void {
  location.hash = href(path, query);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const update = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}
