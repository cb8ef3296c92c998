/**
 * HTML building for the report with escaping by default: `html` escapes every interpolated value
 * unless it is itself `Html` built the same way, so a title, a body or an agent's prompt can never
 * become markup — however a section is written.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);

function part(value: Part): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(part).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += part(v) + strings[i + 1]!;
  });
  return new Html(out);
}

/** Our own constant markup (the stylesheet): never pass data here. */
export const trusted = (text: string): Html => new Html(text);

/** A CSS class from a status word: only [a-z_] survive, so data never reaches the class attribute as anything else. */
export const statusClass = (status: string): string =>
  `st-${status.toLowerCase().replace(/[^a-z_]/g, '') || 'unknown'}`;

export const int = (n: number): string => n.toLocaleString('en-US');
export const cents = (n: number): string => `${int(n)}¢`;
export const score = (n: number | null): string => (n === null ? '—' : n.toFixed(2));

/** `2026-03-01 09:00:00Z` from an ISO time; `—` when there is none. */
export const time = (iso: string | null): Html =>
  iso ? html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>` : html`—`;

export function duration(ms: number | null): string {
  if (ms === null) return '—';
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s - m * 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** Spent against a budget: `1,200 / 10,000 tokens (12.0 %)`, or `1,200 tokens (no budget)`. */
export function against(spent: number, budget: number | null, unit: (n: number) => string): string {
  if (budget === null || budget === 0) return `${unit(spent)} (no budget)`;
  return `${unit(spent)} of ${unit(budget)} (${((spent / budget) * 100).toFixed(1)} %)`;
}
