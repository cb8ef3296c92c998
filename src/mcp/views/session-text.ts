import * as z from 'zod';

/**
 * The texts of xylocopa's session tools, rendered from their structuredContent so the
 * two can never disagree and an alias (same schema, same renderer) is byte-identical to its canonical
 * tool. Colony's transcript (session_messages) plays the part of xylocopa's display file.
 */

/** What a session or agent shows as its project when its agent has none (colony agents runtime NAME --project P gives it one). */
export const NO_PROJECT = '-';
/** A turn's content is cut here in session_read / session_tail (xylocopa's TURN_CONTENT_MAX_CHARS). */
export const TURN_MAX_CHARS = 3000;

/** The first `n` characters as Python slices them (code points, so a surrogate pair is never split). */
export function cut(text: string, n: number): string {
  if (text.length <= n) return text;
  const points = Array.from(text);
  return points.length <= n ? text : points.slice(0, n).join('');
}

/** The first 19 characters of an ISO timestamp: `2026-03-01T09:00:00`. */
export const ts19 = (iso: string | null | undefined): string => (iso ?? '').slice(0, 19);

/**
 * A turn as session_read shows it: cut at 3000 characters with xylocopa's `\n... [truncated]`. A message
 * that was already capped at 64 KiB when it was recorded also keeps its cap marker (the last line of the
 * stored text, "… [truncated: N of M bytes omitted]"), so the reader still learns how big it really was.
 */
export function displayTurn(content: string, capped: boolean): { content: string; truncated: boolean } {
  const head = cut(content, TURN_MAX_CHARS);
  if (head === content) return { content, truncated: false };
  const shown = `${head}\n... [truncated]`;
  return { content: capped ? `${shown}\n${content.slice(content.lastIndexOf('\n') + 1)}` : shown, truncated: true };
}

export const Role = z.enum(['user', 'agent', 'system']);

export const SessionList = z.object({
  project: z.string().describe('The project filter given ("" for none)'),
  count: z.number().int(),
  sessions: z.array(
    z.object({
      session_id: z.string(),
      run_id: z.number().int(),
      agent_id: z.number().int(),
      agent_name: z.string(),
      status: z.string().describe("The agent's runtime status: IDLE, EXECUTING, ERROR or STOPPED"),
      project: z.string(),
      task_id: z.number().int().nullable(),
      last_message_at: z.string().nullable(),
      preview: z.string().describe('The start of the last message (up to 200 characters)'),
    }),
  ),
});
export type SessionList = z.infer<typeof SessionList>;

export function sessionListText(v: SessionList): string {
  if (v.count === 0) return `No sessions found.${v.project ? ` (project filter: ${v.project})` : ''}`;
  const blocks = v.sessions.map(
    (s) =>
      `- **${s.agent_name}** [${s.status || '?'}] — ${s.project}\n  session: \`${s.session_id}\`  agent: \`${s.agent_id}\`\n  ${ts19(s.last_message_at)}  ${cut(s.preview, 100)}\n`,
  );
  return [`Found ${v.count} session(s):\n`, ...blocks].join('\n');
}

export const Transcript = z.object({
  result: z
    .enum(['found', 'not_found', 'no_session', 'no_messages'])
    .describe(
      'found; not_found (nothing matches the identifier); no_session (the agent has never run); no_messages (the session has no messages yet)',
    ),
  identifier: z.string(),
  agent: z.object({ agent_id: z.number().int(), name: z.string(), project: z.string() }).nullable(),
  session_id: z.string().nullable(),
  run_id: z.number().int().nullable(),
  total: z.number().int().describe('Messages in the session; `messages` holds the last max_turns of them'),
  messages: z.array(
    z.object({
      seq: z.number().int(),
      role: Role,
      at: z.string(),
      content: z.string().describe('As shown: cut at 3000 characters'),
      truncated: z.boolean().describe('Cut at 3000 characters here'),
      capped: z.boolean().describe('Cut at 64 KiB when it was recorded'),
      bytes: z.number().int().describe('Its size in bytes before any cut'),
    }),
  ),
});
export type Transcript = z.infer<typeof Transcript>;

const ROLE_LABEL: Record<z.infer<typeof Role>, string> = { user: 'User', agent: 'Agent', system: 'System' };

export function transcriptText(v: Transcript): string {
  switch (v.result) {
    case 'not_found':
      return `No agent found matching: ${v.identifier}`;
    case 'no_session':
      // xylocopa's "no session file" text, without the file talk: in Colony an agent has a session once it has run.
      return `Session not found for ${v.agent!.name} (${v.agent!.project}).\nThe agent has no session yet: it has never run.`;
    case 'no_messages':
      return `Session ${v.session_id} exists but has no messages in display file.`;
    case 'found': {
      const shown = v.messages.length;
      const lines = [
        `# Session: ${v.agent!.name} (${v.agent!.project})`,
        `Session ID: \`${v.session_id}\``,
        `Messages: ${v.total} total${v.total > shown ? ` (showing last ${shown})` : ''}`,
        '',
      ];
      for (const m of v.messages) lines.push(`**[${ROLE_LABEL[m.role]}]** ${ts19(m.at)}`, m.content, '');
      return lines.join('\n');
    }
    default: {
      const never: never = v.result;
      return never;
    }
  }
}
