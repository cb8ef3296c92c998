import type { App } from '../app.js';
import { channelMessages, getMessage, type MessageRow } from '../projections/channel-queries.js';
import type { GoalRow } from '../projections/goal-queries.js';
import type { TaskRow } from '../projections/task-queries.js';

/** What a goal's work produced, as the report lists it: messages marked as artifacts, and those tasks named. */
export interface ReportArtifact {
  messageId: number;
  channel: string;
  from: string;
  at: string;
  subject: string | null;
  body: string;
  taskIds: number[];
}
const ALL_MESSAGES = 1_000_000;
/** Messages of the goal channel marked `metadata.kind = artifact`, and every message a task named as its artifact. */
export function artifactsOf(app: App, g: GoalRow, tasks: readonly TaskRow[]): ReportArtifact[] {
  const found = new Map<number, MessageRow>();
  for (const m of channelMessages(app.engine.db, g.channelId, ALL_MESSAGES, null))
    if (m.metadata?.kind === 'artifact') found.set(m.messageId, m);
  for (const id of tasks.flatMap((t) => t.artifactMessageIds)) {
    const m = found.has(id) ? null : getMessage(app.engine.db, id);
    if (m) found.set(id, m);
  }
  return [...found.values()]
    .sort((a, b) => a.messageId - b.messageId)
    .map((m) => ({
      messageId: m.messageId,
      channel: m.channelName,
      from: m.fromName,
      at: m.createdAt,
      subject: m.subject,
      body: m.body,
      taskIds: tasks.filter((t) => t.artifactMessageIds.includes(m.messageId)).map((t) => t.taskId),
    }));
}
