import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunContext } from './shared.js';
import { sleep, type Colony } from './colony-client.js';
import { diffCommands, renderDiff, type RealCommand } from './diff.js';
import { discover, helpRunner, parseHelp, pool, type HelpPage } from './help-flags.js';
import type { DocumentedCommand } from './cli-doc.js';
import { ARTIFACT, CLI_DOC, CLI_SECTION, COORDINATOR, jsonOf, REPORT_FILE, TASK, withJson } from './shared.js';
import { allTasks, claimReady, goalSnapshot, handIn, postArtifact, type GoalSnapshot } from './tasks.js';

/**
 * cli-verifier: claims what the coordinator assigned; with extract-source-flags it asks the real CLI
 * (`colony <cmd> --help`, two at a time) for its commands and options and posts them; with
 * diff-and-report it waits (bounded) for the docs-scanner's artifact, compares, writes the Markdown
 * report into its working directory (the task's command verifier checks it) and posts the findings.
 */
const SCAN_WAIT_MS = 60_000;

export async function verifyCli(ctx: RunContext): Promise<string> {
  const { colony, env } = ctx;
  const taskId = Number(env.COLONY_TASK_ID ?? 0);
  if (!taskId) return claimed(await claimReady(colony, COORDINATOR));
  const goalId = Number(env.COLONY_GOAL_ID);
  let result: string;
  if (env.COLONY_TASK_TITLE === TASK.extract) result = await extract(ctx, goalId, taskId);
  else if (env.COLONY_TASK_TITLE === TASK.diff) result = await diff(ctx, goalId, taskId);
  else return `task #${taskId} "${env.COLONY_TASK_TITLE}" is not one cli-verifier knows`;
  // diff-and-report waits for extract-source-flags: claim it now that that one is handed in.
  const next = await claimReady(colony, COORDINATOR);
  return next.length > 0 ? `${result} Then ${claimed(next)}.` : result;
}

const claimed = (names: string[]): string => (names.length > 0 ? `claimed ${names.join(', ')}` : 'nothing to claim');
const cliOf = (ctx: RunContext) => ({
  node: process.execPath,
  bin: ctx.env.DG_COLONY_BIN ?? join(ctx.repo, 'bin', 'colony.js'),
});

/** Leaf commands only: a group (`colony agents`) has no options of its own to document. */
const realCommands = (pages: readonly HelpPage[]): RealCommand[] =>
  pages
    .filter((p) => p.exists && p.command && p.subcommands.length === 0)
    .map((p) => ({ command: p.command, options: p.options.map((o) => o.names) }));

async function extract(ctx: RunContext, goalId: number, taskId: number): Promise<string> {
  const { colony } = ctx;
  const cli = cliOf(ctx);
  const pages = await discover(helpRunner(cli.node, cli.bin), 2);
  pages.forEach((p) => colony.read(`${p.usage}\n${p.options.map((o) => o.spec).join('\n')}`));
  const commands = realCommands(pages);
  const options = commands.reduce((n, c) => n + c.options.length, 0);
  const summary = `Real CLI: ${commands.length} commands with ${options} options, from ${pages.length} \`colony … --help\` pages.`;
  const body = withJson(summary, { artifact: ARTIFACT.real, commands });
  const snapshot = await goalSnapshot(colony, goalId);
  const messageId = await postArtifact(
    colony,
    snapshot.goal.channel,
    `${TASK.extract}: the CLI's own commands and options`,
    body,
    { artifact: ARTIFACT.real, task_id: taskId, commands: commands.length, options },
  );
  const status = await handIn(
    colony,
    taskId,
    { tokens: Math.ceil(body.length / 4), note: `${pages.length} help pages` },
    summary,
    [messageId],
  );
  return `${TASK.extract} ${status}: ${summary}`;
}

/** The scan-docs task once it is done (bounded wait: the docs-scanner may still be at work). */
async function waitForScan(colony: Colony, goalId: number): Promise<GoalSnapshot> {
  const deadline = Date.now() + SCAN_WAIT_MS;
  for (;;) {
    const snapshot = await goalSnapshot(colony, goalId);
    const scan = allTasks(snapshot).find((t) => t.title === TASK.scan);
    if (scan?.status === 'done') return snapshot;
    if (!scan || ['failed', 'timeout', 'cancelled'].includes(scan.status) || Date.now() > deadline) {
      throw new Error(`${TASK.scan} is ${scan?.status ?? 'absent'}: there are no documented flags to compare with`);
    }
    await sleep(1000);
  }
}

interface Message {
  message_id: number;
  body: string;
  metadata: Record<string, unknown> | null;
}

/** The artifact a task handed in, read back from the goal channel. */
async function artifactOf<T>(colony: Colony, snapshot: GoalSnapshot, title: string, kind: string): Promise<T> {
  const task = allTasks(snapshot).find((t) => t.title === title);
  const { messages } = await colony.call<{ messages: Message[] }>('get_channel_messages', {
    channel_name: snapshot.goal.channel,
    limit: 200,
  });
  const m = messages.find((x) => task?.artifact_message_ids.includes(x.message_id) && x.metadata?.artifact === kind);
  if (!m) throw new Error(`no ${kind} artifact of ${title} in #${snapshot.goal.channel}`);
  colony.read(m.body);
  return jsonOf<T>(m.body);
}

async function diff(ctx: RunContext, goalId: number, taskId: number): Promise<string> {
  const { colony } = ctx;
  const snapshot = await waitForScan(colony, goalId);
  const documented = (
    await artifactOf<{ commands: DocumentedCommand[] }>(colony, snapshot, TASK.scan, ARTIFACT.documented)
  ).commands;
  const real = (await artifactOf<{ commands: RealCommand[] }>(colony, snapshot, TASK.extract, ARTIFACT.real)).commands;
  const hidden = await hiddenCommands(ctx, documented, real);
  const result = diffCommands(
    documented.map((d) => ({ ...d, usage: [] })),
    [...real, ...hidden],
  );
  const markdown = renderDiff(result, {
    doc: CLI_DOC,
    section: CLI_SECTION,
    cli: 'colony',
    at: new Date().toISOString().slice(0, 10),
  });
  writeFileSync(REPORT_FILE, markdown);
  colony.wrote(markdown);
  const summary = `${result.findings} findings: ${result.commands.filter((c) => c.status !== 'ok').length} of ${result.commands.length} commands differ between ${CLI_DOC} and --help. Report: ${REPORT_FILE}.`;
  const messageId = await postArtifact(
    colony,
    snapshot.goal.channel,
    `${TASK.diff}: ${CLI_DOC} vs colony --help`,
    markdown.slice(0, 15_000),
    { artifact: ARTIFACT.diff, task_id: taskId, findings: result.findings, file: REPORT_FILE },
  );
  const status = await handIn(
    colony,
    taskId,
    { tokens: Math.ceil(markdown.length / 4), note: 'compared documented and real flags' },
    summary,
    [messageId],
  );
  await colony.call('send_message', {
    to: COORDINATOR,
    body: `${TASK.diff} (#${taskId}) is ${status}: ${summary} Findings: message #${messageId}.`,
    metadata: JSON.stringify({
      kind: 'task_report',
      goal_id: goalId,
      task_id: taskId,
      status,
      findings: result.findings,
    }),
  });
  return `${TASK.diff} ${status}: ${summary}`;
}

/** Documented commands the help pages did not list may still exist (hidden): ask each directly. */
async function hiddenCommands(
  ctx: RunContext,
  documented: readonly DocumentedCommand[],
  real: readonly RealCommand[],
): Promise<RealCommand[]> {
  const known = new Set(real.map((r) => r.command));
  const cli = cliOf(ctx);
  const run = helpRunner(cli.node, cli.bin);
  const pages = await pool(
    documented.filter((d) => !known.has(d.command)),
    2,
    async (d) => parseHelp(d.command, await run(d.command)),
  );
  return realCommands(pages);
}
