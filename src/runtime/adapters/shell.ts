import type { Arg } from './types.js';

/**
 * A launch line as one `sh -c` string — the form every confined process takes (confine.ts). Literals are
 * single-quoted, so an agent's text (its model string, its prompt when a CLI takes it as an argument)
 * is never read by the shell; `{ env }` becomes a double-quoted expansion of a variable Colony sets.
 */
export function shellLine(binary: string, args: readonly Arg[]): string {
  return ['exec', quote(binary), ...args.map((a) => (typeof a === 'string' ? quote(a) : envRef(a.env)))].join(' ');
}

export const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

function envRef(name: string): string {
  if (!/^[A-Z_][A-Z0-9_]*$/.test(name)) throw new Error(`not an environment variable name: ${name}`);
  return `"$${name}"`;
}
