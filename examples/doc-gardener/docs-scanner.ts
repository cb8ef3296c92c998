import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunContext } from './shared.js';
import { documentedCommands } from './cli-doc.js';
import { ARTIFACT, CLI_DOC, CLI_SECTION, COORDINATOR, TASK, withJson } from './shared.js';
import { claimReady, goalSnapshot, handIn, postArtifact } from './tasks.js';

/**
 * docs-scanner: woken by the coordinator's DM it claims its task; woken with scan-docs it reads the
 * "## Commands" table of docs/cli.md, posts the documented commands and flags to the goal channel as an
 * artifact, reports the usage of the reading, hands the task in and tells the coordinator.
 */
export async function scanDocs(ctx: RunContext): Promise<string> {
  const { colony, env } = ctx;
  const taskId = Number(env.COLONY_TASK_ID ?? 0);
  if (!taskId) {
    const claimed = await claimReady(colony, COORDINATOR);
    return claimed.length > 0 ? `claimed ${claimed.join(', ')}` : 'nothing to claim';
  }
  if (env.COLONY_TASK_TITLE !== TASK.scan)
    return `task #${taskId} "${env.COLONY_TASK_TITLE}" is not one docs-scanner knows`;
  const goalId = Number(env.COLONY_GOAL_ID);
  const snapshot = await goalSnapshot(colony, goalId);
  const path = join(ctx.repo, CLI_DOC);
  const doc = readFileSync(path, 'utf8');
  colony.read(doc);
  const commands = documentedCommands(doc, CLI_SECTION);
  if (commands.length === 0) throw new Error(`${path} has no commands in a "${CLI_SECTION}" table`);
  const flags = commands.reduce((n, c) => n + c.flags.length, 0);
  const summary = `Documented CLI: ${commands.length} commands and ${flags} flags in ${CLI_DOC}, section "${CLI_SECTION}".`;
  const body = withJson(summary, {
    artifact: ARTIFACT.documented,
    source: CLI_DOC,
    commands: commands.map(({ command, flags: f }) => ({ command, flags: f })),
  });
  colony.wrote(body);
  const messageId = await postArtifact(
    colony,
    snapshot.goal.channel,
    `${TASK.scan}: documented commands and flags`,
    body,
    { artifact: ARTIFACT.documented, task_id: taskId, commands: commands.length, flags },
  );
  const status = await handIn(colony, taskId, { tokens: Math.ceil(doc.length / 4), note: `read ${CLI_DOC}` }, summary, [
    messageId,
  ]);
  await colony.call('send_message', {
    to: COORDINATOR,
    body: `${TASK.scan} (#${taskId}) is ${status}: ${summary} Artifact: message #${messageId}.`,
    metadata: JSON.stringify({ kind: 'task_report', goal_id: goalId, task_id: taskId, status }),
  });
  return `${TASK.scan}: ${summary}`;
}
