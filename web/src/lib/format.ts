/** Small formatters; every string they return is rendered as text by Svelte (agents' words are never HTML). */
export const int = (n: number | null | undefined): string => (n === null || n === undefined ? '—' : Math.round(n).toLocaleString('en-US'));
export const cents = (n: number | null | undefined): string => (n === null || n === undefined ? '—' : `$${(n / 100).toFixed(2)}`);
/** The one absolute form, in UTC (what the CLI and the log record): `2026-12-06 05:31:12 UTC`. */
export const when = (iso: string | null | undefined): string => (iso ? `${iso.replace('T', ' ').slice(0, 19)} UTC` : '—');
/** Relative to `now` (the page clock, lib/clock.svelte.ts): "just now", "4 min ago", "in 3 h". */
export const ago = (iso: string | null | undefined, now = Date.now()): string => {
  if (!iso) return '—';
  const d = (now - Date.parse(iso)) / 1000;
  const s = Math.abs(d);
  const span = s < 45 ? null : s < 3600 ? `${Math.round(s / 60)} min` : s < 86400 ? `${Math.round(s / 3600)} h` : `${Math.round(s / 86400)} d`;
  if (span === null) return 'just now';
  return d >= 0 ? `${span} ago` : `in ${span}`;
};
/** A span of time: "42 s", "7 min", "3 h 5 min", "2 d 4 h". */
export const span = (ms: number): string => {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.round((s % 86400) / 3600)} h`;
};
/** "3 items" / "1 item". */
export const plural = (n: number, word: string, many = `${word}s`): string => `${n.toLocaleString('en-US')} ${n === 1 ? word : many}`;
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
/** A number field's value (Svelte binds `<input type=number>` to a number, or null when empty): the number, or undefined when none. */
export const entered = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : undefined;
