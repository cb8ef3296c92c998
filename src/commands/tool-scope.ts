import { invalidInput } from '../errors.js';

/**
 * An agent's tool scope may name only tools an agent can call. Which tools exist is a fact from the
 * tool registry (src/mcp), which this pure layer does not load: callers pass it in, name → surface.
 * A typo would otherwise be stored silently and only show up as ErrToolNotInScope on the agent's
 * first call; an owner-surface tool would be refused on every call whatever the scope says.
 */
export type KnownTools = ReadonlyMap<string, 'agent' | 'owner'>;

/** Throws one ErrInvalidInput naming every unknown or owner-only name (with the closest agent tool for a typo). */
export function checkToolScope(scope: readonly string[], known: KnownTools, field = 'tool_scope'): void {
  const agentTools = [...known].filter(([, surface]) => surface === 'agent').map(([name]) => name);
  const unknown: { tool: string; suggestion: string | null }[] = [];
  const ownerOnly: string[] = [];
  for (const tool of new Set(scope)) {
    const surface = known.get(tool);
    if (surface === 'owner') ownerOnly.push(tool);
    else if (surface === undefined) unknown.push({ tool, suggestion: closest(tool, agentTools) });
  }
  if (unknown.length === 0 && ownerOnly.length === 0) return;
  const problems = [
    ...unknown.map(
      ({ tool, suggestion }) => `unknown tool ${tool}${suggestion ? `: did you mean ${suggestion}?` : ''}`,
    ),
    ...ownerOnly.map((tool) => `${tool} is an owner tool: agents cannot call it`),
  ];
  throw invalidInput(problems.join('; '), {
    field,
    unknown_tools: unknown.map((u) => u.tool),
    owner_tools: ownerOnly,
    suggestions: Object.fromEntries(unknown.filter((u) => u.suggestion).map((u) => [u.tool, u.suggestion])),
  });
}

/**
 * The candidate nearest by edit distance, if near enough to be a typo: at most a third of the name's
 * length (at least 2) edits. Further than that a suggestion is noise ("attachments:write" → "whoami").
 */
export function closest(name: string, candidates: readonly string[]): string | null {
  const limit = Math.max(2, Math.floor(name.length / 3));
  let best: string | null = null;
  let bestDistance = limit + 1;
  for (const c of [...candidates].sort()) {
    const d = editDistance(name, c);
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return best;
}

/** Levenshtein distance (insert, delete, substitute), one row at a time. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}
