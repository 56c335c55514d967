// Client-side routes under /console: the path names the page, never the token.
import { useEffect, useState } from 'react';

export const base = '/console';

export type Place =
  | { page: 'search' }
  | { page: 'tool'; name: string }
  | { page: 'live' }
  | { page: 'action'; id: string }
  | { page: 'task'; id: string }
  | { page: 'counts' }
  | { page: 'tokens' }
  | { page: 'integrity' }
  | { page: 'unknown'; path: string };

export function placeOf(pathname: string): Place {
  const rest = pathname.startsWith(base) ? pathname.slice(base.length).replace(/^\/+/, '') : pathname;
  const [first = '', ...tail] = rest.split('/');
  const arg = decodeURIComponent(tail.join('/'));
  switch (first) {
    case '':
    case 'search':
      return { page: 'search' };
    case 'tool':
      return arg ? { page: 'tool', name: arg } : { page: 'search' };
    case 'action':
      return arg ? { page: 'action', id: arg } : { page: 'unknown', path: pathname };
    case 'task':
      return arg ? { page: 'task', id: arg } : { page: 'unknown', path: pathname };
    case 'live':
    case 'counts':
    case 'tokens':
    case 'integrity':
      return { page: first };
    default:
      return { page: 'unknown', path: pathname };
  }
}

export const hrefOf = {
  search: () => `${base}/`,
  tool: (name: string) => `${base}/tool/${encodeURIComponent(name)}`,
  live: () => `${base}/live`,
  action: (id: string) => `${base}/action/${encodeURIComponent(id)}`,
  task: (id: string) => `${base}/task/${encodeURIComponent(id)}`,
  counts: () => `${base}/counts`,
  tokens: () => `${base}/tokens`,
  integrity: () => `${base}/integrity`,
};

export function navigate(href: string): void {
  if (href === location.pathname) return;
  history.pushState(null, '', href);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

export function usePlace(): Place {
  const [place, setPlace] = useState(() => placeOf(location.pathname));
  useEffect(() => {
    const update = () => setPlace(placeOf(location.pathname));
    window.addEventListener('popstate', update);
    return () => window.removeEventListener('popstate', update);
  }, []);
  return place;
}
