/**
 * The JSON lines a CLI prints (`--output-format stream-json`, `--json`, `--format json`): each line that
 * parses to an object, in order. Anything else on stdout (a banner, a warning) is skipped, not an error.
 */
export type JsonObject = Record<string, unknown>;

export function jsonLines(stdout: string): JsonObject[] {
  const out: JsonObject[] = [];
  for (const raw of stdout.split('\n')) {
    const line = raw.trim();
    if (!line.startsWith('{')) continue;
    try {
      const v: unknown = JSON.parse(line);
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) out.push(v as JsonObject);
    } catch {
      /* a line cut by the 1 MiB stdout window, or not JSON */
    }
  }
  return out;
}

export const obj = (v: unknown): JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : {};
export const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
/** A token count: a finite non-negative number, else 0. */
export const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.round(v) : 0);
/** A dollar amount the CLI reported: a finite number ≥ 0, else null (it said nothing). */
export const usd = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);

/** One line of a step: the tool and its input, cut to stay readable. */
export function stepLine(tool: string, input: unknown, result: string): string {
  const args = JSON.stringify(input ?? {});
  return `${tool} ${args.length > 200 ? `${args.slice(0, 200)}…` : args} → ${result}`;
}
