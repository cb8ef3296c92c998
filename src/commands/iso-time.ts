/**
 * What probe_update needs from Python to answer as xylocopa does: `datetime.fromisoformat` (after its
 * `Z` → `+00:00`), with a time without an offset read as UTC (xylocopa compares naive UTC times), and
 * `repr()` of a string for the error text. Pure: the probe decider parses the time it is given.
 */
const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2})(?::(\d{2})(?::(\d{2})(?:[.,](\d{1,6}))?)?)?(?:([+-])(\d{2}):?(\d{2})(?::?(\d{2}))?)?)?$/;

/** The instant an ISO 8601 timestamp names, or null when it is not one fromisoformat would take. */
export function parseIsoTimestamp(raw: string): Date | null {
  const m = ISO.exec(raw.replace(/Z$/, '+00:00'));
  if (!m) return null;
  const [y, mo, d, h = 0, mi = 0, s = 0] = m
    .slice(1, 7)
    .map((v) => (v === undefined ? undefined : Number(v))) as number[];
  const micros = m[7] === undefined ? 0 : Number(m[7].padEnd(6, '0'));
  const offsetMin =
    m[8] === undefined ? 0 : (m[8] === '-' ? -1 : 1) * (Number(m[9]) * 60 + Number(m[10]) + Number(m[11] ?? 0) / 60);
  if (y! < 1 || mo! < 1 || mo! > 12 || h > 23 || mi > 59 || s > 59 || Math.abs(offsetMin) >= 24 * 60) return null;
  const at = new Date(Date.UTC(y!, mo! - 1, d!, h, mi, s, Math.floor(micros / 1000)));
  at.setUTCFullYear(y!); // Date.UTC maps years 0–99 to 1900–1999
  if (at.getUTCDate() !== d || at.getUTCMonth() !== mo! - 1) return null; // 2025-02-30
  const instant = new Date(at.getTime() - offsetMin * 60_000);
  return Number.isNaN(instant.getTime()) ? null : instant;
}

/** Python's `repr(str)`: single quotes unless the text has one and no double quote; escapes as Python prints them. */
export function pyRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === '\\' || ch === quote) out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || (code >= 0x7f && code < 0xa0)) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${quote}${out}${quote}`;
}
