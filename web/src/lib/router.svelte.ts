/**
 * A small History-API router: the console's pages are paths (`/goals/7`), links are ordinary <a href>
 * intercepted for same-origin navigation, and the back button works.
 */
export interface Route { page: string; params: Record<string, string> }

const PATTERNS: [RegExp, string, string[]][] = [
  [/^\/$/, 'needs', []],
  [/^\/goals\/?$/, 'goals', []],
  [/^\/goals\/(\d+)\/?$/, 'goal', ['id']],
  [/^\/approvals\/?$/, 'approvals', []],
  [/^\/agents\/?$/, 'agents', []],
  [/^\/agents\/([a-z][a-z0-9-]*)\/?$/, 'agent', ['name']],
  [/^\/requests\/?$/, 'requests', []],
  [/^\/audit\/?$/, 'audit', []],
  [/^\/oauth\/?$/, 'oauth', []],
];

export function match(path: string): Route {
  for (const [re, page, names] of PATTERNS) {
    const m = re.exec(path);
    if (m) return { page, params: Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)])) };
  }
  return { page: 'missing', params: {} };
}

export const router = $state({ route: match(location.pathname), search: location.search, path: location.pathname });

export function navigate(href: string, replace = false): void {
  const url = new URL(href, location.origin);
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  router.route = match(url.pathname);
  router.search = url.search;
  router.path = url.pathname;
  window.scrollTo(0, 0);
}

addEventListener('popstate', () => {
  router.route = match(location.pathname);
  router.search = location.search;
  router.path = location.pathname;
});

/** Replaces the query part of the current URL (a page's filters), keeping its place in history. */
export function setSearch(params: Record<string, string | number | null | undefined>): void {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== '') q.set(k, String(v));
  const search = q.toString() ? `?${q}` : '';
  if (search === location.search) return;
  history.replaceState(null, '', location.pathname + search + location.hash);
  router.search = search;
}
/** One query parameter of the current URL. */
export const searchParam = (name: string): string => new URLSearchParams(router.search).get(name) ?? '';

/** Same-origin links navigate in place (modifier clicks and other targets keep the browser's behaviour). */
addEventListener('click', (e) => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = (e.target as Element | null)?.closest?.('a');
  if (!a || a.target || a.hasAttribute('download')) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || url.pathname.startsWith('/api/') || url.pathname.startsWith('/apps/')) return;
  e.preventDefault();
  navigate(url.pathname + url.search);
});
