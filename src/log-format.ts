import { oneLine } from './terminal.js';

/**
 * The readable form of a log line for a terminal (src/log.ts uses it when stderr is a TTY; pipes and
 * files keep JSON): `12:04:05.123 INFO  tool call principal=user:owner tool=create_goal outcome=success ms=3.1`.
 * Small on purpose (pino-pretty is not a dependency). Whatever a field holds, the result is one line
 * with no control or bidi character left to act on the terminal.
 */
const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** pino's own fields: shown as the time, level and message, or not at all. */
const OWN = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'svc']);

export function prettyLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return `${oneLine(json.trimEnd())}\n`;
  }
  const time = typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11, 23) : '';
  const level = (LEVELS[entry.level as number] ?? String(entry.level)).padEnd(5);
  const fields = Object.entries(entry)
    .filter(([k]) => !OWN.has(k))
    .map(([k, v]) => `${k}=${value(k, v)}`);
  return `${oneLine([time, level, String(entry.msg ?? ''), ...fields].filter(Boolean).join(' '))}\n`;
}

function value(key: string, v: unknown): string {
  // An error shows as its type and message; the stack stays in the JSON form (one line here).
  if (key === 'err' && v && typeof v === 'object') {
    const e = v as { type?: string; message?: string };
    return JSON.stringify(`${e.type ?? 'Error'}: ${e.message ?? ''}`);
  }
  if (typeof v === 'string') return /^[\w.:/@#+-]+$/.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v) ?? String(v);
}
