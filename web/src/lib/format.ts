/** Small formatters; every string they return is rendered as text by Svelte (agents' words are never HTML). */
export const int = (n: number | null | undefined): string => (n === null || n === undefined ? '—' : Math.round(n).toLocaleString('en-US'));
export const cents = (n: number | null | undefined): string => (n === null || n === undefined ? '—' : `$${(n / 100).toFixed(2)}`);
export const when = (iso: string | null | undefined): string => (iso ? iso.replace('T', ' ').slice(0, 19) : '—');
export const ago = (iso: string | null | undefined): string => {
  if (!iso) return '—';
  const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  if (s < 60) return `${Math.round(s)} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
};
/** Control characters shown as visible escapes: text agents wrote can carry them, a page must not act on them. */
export const visible = (text: string | null | undefined): string =>
  // eslint-disable-next-line no-control-regex
  (text ?? '').replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
export const duration = (ms: number | null | undefined): string => (ms === null || ms === undefined ? '—' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);
