import type { FailureCause, LaunchContext, ReportContext } from './types.js';

/**
 * A CLI run's outcome from what the CLI itself said, the same rules for every adapter: no result at all
 * is a crash; a key refused is `auth`; an error result is `error_result`; a tool call the CLI denied is
 * `permission_denied` (the CLI exits 0 for those); Colony's MCP server not reached is `mcp_unreachable`;
 * a wake that asked for Colony calls and got none is `no_colony_call`. The first that applies wins.
 */
export interface CliOutcome {
  /** It printed its final result (a result line, a completed turn). */
  ended: boolean;
  exitCode: number | null;
  tail: string;
  isError: boolean;
  errorText: string;
  denied: string[];
  mcpDown: string | null;
  colonyCalls: number;
  ctx: ReportContext;
}

const AUTH =
  /\b401\b|unauthori[sz]ed|invalid (x-)?api[ _-]?key|authentication|not logged in|please run \/login|invalid bearer/i;
const RESUME =
  /no conversation found|session .*not found|no (such )?session|thread .*not found|could not (find|resume)/i;

export function failureOf(label: string, o: CliOutcome): { cause: FailureCause; reason: string } | null {
  const said = oneLine(o.errorText || lastLine(o.tail));
  if (o.ctx.resumed && (o.isError || !o.ended) && RESUME.test(`${o.errorText}\n${o.tail}`))
    return { cause: 'resume_failed', reason: `${label} could not resume its session: ${said}` };
  if ((o.isError || !o.ended) && AUTH.test(`${o.errorText}\n${o.tail}`))
    return {
      cause: 'auth',
      reason: `${label}'s credentials were refused: ${said} — set its API key as a secret (colony secrets set …) or log the CLI in to the agent's home (docs/agents.md: Running real agents)`,
    };
  if (!o.ended)
    return {
      cause: 'crash',
      reason: `${label} ended without a result (${o.exitCode === null ? 'killed' : `exit ${o.exitCode}`})${said ? `: ${said}` : ''}`,
    };
  if (o.isError) return { cause: 'error_result', reason: `${label} ended with an error: ${said || 'no message'}` };
  if (o.denied.length > 0)
    return {
      cause: 'permission_denied',
      reason: `${label} was denied ${o.denied.length} tool call(s): ${[...new Set(o.denied)].join(', ')} — a Colony tool outside the agent's scope (colony agents update NAME --tools …), or a built-in tool Colony does not allow`,
    };
  if (o.mcpDown) return { cause: 'mcp_unreachable', reason: `${label}: ${o.mcpDown}` };
  if (o.ctx.expectsColonyCall && o.colonyCalls === 0)
    return {
      cause: 'no_colony_call',
      reason: `${label} made no call to Colony although its wake asked it to act on its goal or task${said ? `; it said: ${said}` : ''}`,
    };
  return null;
}

const oneLine = (s: string): string => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > 300 ? `${t.slice(0, 300)}…` : t;
};
const lastLine = (tail: string): string =>
  tail
    .trim()
    .split('\n')
    .filter((l) => l.trim() && !l.trim().startsWith('{'))
    .slice(-1)[0] ?? '';

/** The `.mcp.json` shape (Claude Code, and any CLI that reads it): Colony's URL as the process sees it, the agent's token. */
export function mcpConfig(ctx: LaunchContext): string {
  // ${COLONY_TOKEN} is expanded by the CLI from its environment: the token is never written to disk.
  const headers = { Authorization: 'Bearer ${COLONY_TOKEN}' };
  return `${JSON.stringify({ mcpServers: { colony: { type: 'http', url: ctx.mcpUrl, headers } } }, null, 2)}\n`;
}
