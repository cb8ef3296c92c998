import * as z from 'zod';
import { lastSessionMessages } from '../../projections/session-message-queries.js';
import { findSession, listSessions, lookupAgent } from '../../projections/session-queries.js';
import { defineTool, type AnyTool, type ToolContext } from '../tool.js';
import {
  displayTurn,
  NO_PROJECT,
  SessionList,
  sessionListText,
  Transcript,
  transcriptText,
} from '../views/session-text.js';
import { readableBy } from '../views/readable.js';
import { speaker } from '../../events/principals.js';

/**
 * Sessions: xylocopa's session_list, session_read, session_tail and their aliases list_sessions and
 * read_session, and codomyrmex's get_agent_memory — over the transcripts of Colony's runs, scoped to the
 * caller's tenant and to the runs it may read (views/readable.ts: its own and those of the agents it
 * spawned; the owner, the team's). xylocopa's tools answer with xylocopa's texts, misses included, and
 * never set isError; get_agent_memory answers with codomyrmex's JSON shapes.
 */
const common = { trust: 'read', surface: 'agent', module: 'sessions' } as const;
const tenantOf = (ctx: ToolContext): number => speaker(ctx.caller).tenant;

const project = z.string().max(200).default('').describe('Only sessions of agents of this project (by name)');

function sessionList(ctx: ToolContext, a: { project: string }): SessionList {
  const rows = listSessions(ctx.app.engine.db, tenantOf(ctx), readableBy(ctx), a.project || null);
  return {
    project: a.project,
    count: rows.length,
    sessions: rows.map((r) => ({
      session_id: r.sessionId,
      run_id: r.runId,
      agent_id: r.agentId,
      agent_name: r.agentName,
      status: r.status.toUpperCase(),
      project: r.project ?? NO_PROJECT,
      task_id: r.taskId,
      last_message_at: r.lastActivityAt,
      preview: r.preview ?? '',
    })),
  };
}

const listDescription = (alias: boolean) =>
  `${alias ? '[Alias of session_list.] ' : ''}Lists the latest sessions (runs that have started) you may read — your own and those of agents you spawned (the owner: the whole team's) — newest activity first, at most 30: agent name, its runtime status (IDLE, EXECUTING, ERROR, STOPPED), project, session id, agent id, last activity and a preview of the last message. Pass a session id (or agent id or name) to session_read for the transcript. Answers "No sessions found." when there are none.`;

const listTool = (name: string, alias: boolean) =>
  defineTool({
    ...common,
    name,
    title: alias ? 'List sessions (alias)' : 'List sessions',
    description: listDescription(alias),
    input: z.strictObject({ project }),
    output: SessionList,
    handler: sessionList,
    text: sessionListText,
  });

/**
 * One transcript by identifier (lookup rules in session-queries.ts). When it names an agent, its latest
 * session is read. The last `max_turns` messages, each cut at 3000 characters.
 */
function transcript(ctx: ToolContext, a: { session_id: string; max_turns: number }): Transcript {
  const db = ctx.app.engine.db;
  const empty = { identifier: a.session_id, total: 0, messages: [] };
  const found = lookupAgent(db, tenantOf(ctx), a.session_id, readableBy(ctx));
  if (!found) return { ...empty, result: 'not_found', agent: null, session_id: null, run_id: null };
  const agent = { agent_id: found.agent.agentId, name: found.agent.name, project: found.agent.project ?? NO_PROJECT };
  if (found.runId === null) return { ...empty, result: 'no_session', agent, session_id: null, run_id: null };
  const { messages, total } = lastSessionMessages(db, found.runId, a.max_turns);
  const base = { ...empty, agent, session_id: found.sessionId, run_id: found.runId, total };
  if (total === 0) return { ...base, result: 'no_messages' };
  return {
    ...base,
    result: 'found',
    messages: messages.map((m) => {
      const shown = displayTurn(m.content, m.truncated);
      return {
        seq: m.seq,
        role: m.role,
        at: m.at,
        content: shown.content,
        truncated: shown.truncated,
        capped: m.truncated,
        bytes: m.bytes,
      };
    }),
  };
}

// xylocopa never validated max_turns (a 0 or a negative value sliced oddly); Colony takes 1..1000.
const maxTurns = (dflt: number) =>
  z
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(dflt)
    .describe(`How many of the latest messages to show (1–1000, default ${dflt})`);
const identifier = z
  .string()
  .max(200)
  .describe('A session id, an agent id or name (its latest session), or a prefix of a session id or of an agent name');

const readTool = (name: string, title: string, dflt: number, lead: string) =>
  defineTool({
    ...common,
    name,
    title,
    description: `${lead} Finds the session by, in order: exact session id, exact agent id or name, session id prefix, agent name prefix (the most recently active match). Shows a header (agent, session id, message count) then each message as **[User|Agent|System]** timestamp and its text, cut at 3000 characters ("... [truncated]"). Answers "No agent found matching: X" when nothing matches.`,
    input: z.strictObject({ session_id: identifier, max_turns: maxTurns(dflt) }),
    output: Transcript,
    handler: transcript,
    text: transcriptText,
  });

const MemoryLog = z.object({ role: z.enum(['user', 'assistant', 'system']), content: z.string() });
const Memory = z.looseObject({
  status: z.enum(['success', 'error']),
  logs: z.array(MemoryLog).optional(),
  session_id: z.string().optional(),
  message: z.string().optional(),
});
const MEMORY_ROLE = { user: 'user', agent: 'assistant', system: 'system' } as const;

const memory = defineTool({
  ...common,
  name: 'get_agent_memory',
  title: "Get an agent session's memory",
  description:
    'Returns the last 50 messages of one session you may read (yours, or of an agent you spawned; the owner: any) as {"status":"success","logs":[{"role":"user"|"assistant"|"system","content"}],"session_id"}, oldest first, each in full (a message over 64 KiB was capped when recorded and says so). session_id is an exact session id or a prefix that only one session has. Unknown or ambiguous: {"status":"error","message":"Session X not found."}.',
  input: z.strictObject({
    session_id: z
      .string()
      .max(200)
      .describe('A session id (12 hex characters, see session_list) or a unique prefix of one'),
  }),
  output: Memory,
  handler(ctx, a) {
    const db = ctx.app.engine.db;
    const session = findSession(db, tenantOf(ctx), a.session_id, readableBy(ctx));
    if (!session) return { status: 'error' as const, message: `Session ${a.session_id} not found.` };
    const { messages } = lastSessionMessages(db, session.runId, 50);
    return {
      status: 'success' as const,
      logs: messages.map((m) => ({ role: MEMORY_ROLE[m.role], content: m.content })),
      session_id: session.sessionId,
    };
  },
});

const read =
  "Reads the transcript of one session you may read (yours or an agent's you spawned; the owner: any of the team's) (the prompt it was woken with, its messages, its output), the last 50 messages by default.";
const tail =
  'Reads just the latest messages of a session (10 by default): "what just happened". Use session_read for the fuller history.';

export const sessionTools: readonly AnyTool[] = [
  listTool('session_list', false),
  readTool('session_read', 'Read a session', 50, read),
  readTool('session_tail', 'Tail a session', 10, tail),
  listTool('list_sessions', true),
  readTool('read_session', 'Read a session (alias)', 50, `[Alias of session_read.] ${read}`),
  memory,
];
