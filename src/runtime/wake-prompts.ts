import type { TaskRow } from '../projections/task-queries.js';
import type { ChildRow } from '../projections/wake-queries.js';

/**
 * What Colony asks of an agent it wakes for a task fact (task-wakes.ts): the text goes into the wake-up
 * (RunQueued's `wake.prompt`, so the log says what was asked) and from there into the wake prompt under
 * the task's own section (actions/runs/prompt.ts: title, description, acceptance criteria, ancestry). Each names
 * the task, what is wanted and the exact tool call that does it. Words another agent wrote (a summary)
 * are quoted and attributed, never mixed into Colony's own sentences.
 */
const call = (tool: string, args: Record<string, unknown>): string => `${tool} ${JSON.stringify(args)}`;
/** One line, at most `max` characters, as a JSON string: quoted, its newlines and quotes escaped. */
const quoted = (text: string, max = 200): string => JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);

/** Every line of another principal's words behind `> `: none of them can pass for a line of Colony's. */
const quote = (text: string): string[] => text.split(/\r\n|[\n\r\u2028\u2029]/).map((l) => `> ${l}`);

/**
 * A fired probe's wake-up: the message Colony delivered, under a header naming whoever created the probe
 * (never `system`: Colony only carries it). The message sits inside the probe's envelope, whose footer
 * the creator could not write (commands/probe-message.ts), and whose header names the creator too.
 */
export function probeWakePrompt(p: {
  messageId: number;
  probeId: string;
  creator: { name: string; kind: string };
  envelope: string;
}): string {
  const author = `${p.creator.name} (${p.creator.kind})`;
  return [
    `[#${p.messageId} from ${author} via probe ${p.probeId}]`,
    `Probe ${p.probeId}, set by ${p.creator.kind === 'user' ? `your owner ${author}` : author}, has fired: Colony delivers its message, whose words are ${p.creator.name}'s, not Colony's.`,
    '',
    p.envelope,
  ].join('\n');
}

/**
 * execute_agent called by another agent: its prompt, quoted and attributed, so the woken agent knows a
 * peer asks — not Colony, not its owner. (The owner's prompt is the owner's instruction and goes as it is.)
 */
export function peerExecutePrompt(caller: { agentId: number; name: string }, prompt: string): string {
  return [
    `${caller.name} (agent #${caller.agentId}, a peer on your team — not Colony, not your owner) runs you with execute_agent and asks this (its own words, quoted):`,
    '',
    ...quote(prompt),
  ].join('\n');
}

/** The tools the prompt tells the agent to call that its scope lacks — said plainly, so it asks instead of failing. */
function scopeNote(scope: readonly string[], needed: readonly string[]): string[] {
  const missing = needed.filter((t) => !scope.includes(t));
  if (missing.length === 0) return [];
  return [
    '',
    `Your tool scope lacks ${missing.join(', ')}: ask the owner (send_message {"to": "owner", …}) to add ${missing.length > 1 ? 'them' : 'it'} or to do this step.`,
  ];
}

export function verificationPrompt(
  task: TaskRow,
  handedIn: { agentName: string; summary: string; artifactMessageIds: number[] },
  scope: readonly string[],
): string {
  const lines = [
    `Task #${task.taskId} "${task.title}" awaits your verdict: you are its peer verifier.`,
    `Its assignee, ${handedIn.agentName} (agent), handed it in with this summary (its own words, quoted):`,
    '',
    ...handedIn.summary.split('\n').map((l) => `> ${l}`),
  ];
  if (handedIn.artifactMessageIds.length > 0) {
    lines.push(
      '',
      `Artifacts: messages ${handedIn.artifactMessageIds.map((id) => `#${id}`).join(', ')} (get_channel_messages or search_messages shows them).`,
    );
  }
  lines.push(
    '',
    "Check the work against the task's acceptance criteria (above), then give your verdict with verify_task:",
    `  ${call('verify_task', { task_id: task.taskId, verdict: 'approve', reason: 'what you checked' })}`,
    `  ${call('verify_task', { task_id: task.taskId, verdict: 'reject', reason: 'what is missing' })}`,
    "approve makes it done; reject fails it and tells the goal's coordinator.",
    ...scopeNote(scope, ['verify_task']),
  );
  return lines.join('\n');
}

const LISTED_CHILDREN = 20;
const MAX_ARTIFACTS = 100; // complete_task takes at most 100

/** `holds`: the woken agent holds the parent (else it is the coordinator, asked to take it); `coordinates`: it is the goal's coordinator. */
export interface ParentOffer {
  parent: TaskRow;
  children: ChildRow[];
  holds: boolean;
  coordinates: boolean;
  goalId: number | null;
  scope: readonly string[];
}

/** All children of a parent are done: whoever holds it (or the coordinator) hands it in with a roll-up of theirs. */
export function childrenDonePrompt(o: ParentOffer): string {
  const { parent, children } = o;
  const id = parent.taskId;
  const done = children.filter((c) => c.status === 'done').length;
  const cancelled = children.length - done;
  const lines = [
    `All children of task #${id} "${parent.title}" are done (${done} done${cancelled ? `, ${cancelled} cancelled` : ''}):`,
  ];
  for (const c of children.slice(0, LISTED_CHILDREN)) {
    const by = c.assigneeName ? ` by ${c.assigneeName}` : '';
    const summary = c.summary ? ` — summary: ${quoted(c.summary)}` : '';
    const artifacts = c.artifactMessageIds.length
      ? `; artifacts ${c.artifactMessageIds.map((m) => `#${m}`).join(', ')}`
      : '';
    lines.push(`- #${c.taskId} "${c.title}": ${c.status}${by}${summary}${artifacts}`);
  }
  if (children.length > LISTED_CHILDREN)
    lines.push(`- … and ${children.length - LISTED_CHILDREN} more (get_goal shows the whole tree)`);
  const artifactIds = children.flatMap((c) => c.artifactMessageIds).slice(0, MAX_ARTIFACTS);
  const hand = call('complete_task', {
    task_id: id,
    summary: 'what its children achieved together',
    ...(artifactIds.length ? { artifact_message_ids: artifactIds } : {}),
  });
  lines.push(
    '',
    o.holds
      ? `You hold task #${id}: hand it in with ${hand} (claim_task ${JSON.stringify({ task_id: id })} first if your lease ran out).`
      : `Nobody holds task #${id}, so it comes to you as the goal's coordinator: take it with ${call('claim_task', { task_id: id })}, then hand it in with ${hand}.`,
  );
  lines.push(
    `Its verifier (${parent.verifier.kind}) then decides${parent.verifier.kind === 'auto' ? ': auto makes it done at once' : ''}.`,
  );
  if (parent.parentId === null && o.goalId !== null) {
    // Only the owner and the coordinator close a goal (complete_goal): anyone else is told who will.
    lines.push(
      o.coordinates
        ? `It is the root of goal #${o.goalId}: once it is done, close the goal with ${call('complete_goal', { goal_id: o.goalId, status: 'completed', summary: 'what the goal achieved' })}.`
        : `It is the root of goal #${o.goalId}: once it is done, the goal's coordinator closes the goal.`,
    );
  }
  lines.push(...scopeNote(o.scope, o.holds ? ['complete_task'] : ['claim_task', 'complete_task']));
  return lines.join('\n');
}

/** A dispatched project task (xylocopa's PENDING): the agent takes it, works in the project, and reports back. */
export function dispatchPrompt(
  task: TaskRow,
  project: string,
  retryOf: 'failed' | 'timeout' | null,
  scope: readonly string[],
): string {
  const id = task.taskId;
  const attempt = retryOf
    ? `attempt ${task.attempt}, a retry: the last attempt ${retryOf === 'timeout' ? 'timed out' : 'failed'}`
    : `attempt ${task.attempt}`;
  const plan =
    task.model || task.effort
      ? ' Work with the model and effort it asks for (above; also COLONY_TASK_MODEL and COLONY_TASK_EFFORT).'
      : '';
  return [
    `Task #${id} "${task.title}" of project ${project} was dispatched (${attempt}) and comes to you as an agent of the project.${plan}`,
    `Take it with ${call('claim_task', { task_id: id })} (a 30-minute lease; claiming again renews it), do the work in the project's directory,`,
    `then report back with ${call('complete_task', { task_id: id, summary: 'what you did' })}.`,
    `If you cannot do it, give it back with ${call('release_task', { task_id: id, reason: 'why' })}. ${call('task_get', { task_id: String(id) })} shows it.`,
    ...scopeNote(scope, ['claim_task', 'complete_task']),
  ].join('\n');
}
