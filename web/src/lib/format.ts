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
/**
 * Hidden characters shown as visible escapes: text agents (and OAuth clients) wrote can carry them, a page
 * must not act on them — controls but tab and newline, every Unicode format character (bidi embeddings,
 * overrides, isolates and marks; zero-width spaces and joiners; tag characters) and the line and paragraph
 * separators. An astral one is shown as its two code units, the form JSON and the CLI use.
 */
export const visible = (text: string | null | undefined): string =>
  (text ?? '').replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, (c) =>
    c === '\t' || c === '\n' ? c : Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''),
  );
export const duration = (ms: number | null | undefined): string => (ms === null || ms === undefined ? '—' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);
