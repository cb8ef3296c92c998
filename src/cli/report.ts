import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { App } from '../app.js';
import type { ReportData } from '../report/data.js';
import type { ReportEvidence } from '../report/evidence.js';
import { withOwner } from './owner.js';
import { action, CliError, printJson } from './shared.js';
import { oneLine } from '../terminal.js';

/** `colony report --goal ID --out FILE`: one self-contained HTML file about a goal. */
export function registerReport(program: Command): void {
  program
    .command('report')
    .description(
      "write a goal's report as one self-contained HTML file: tree, agents, runs, costs, timeline, artifacts",
    )
    .requiredOption('--goal <id>', 'the goal')
    .requiredOption('--out <file>', 'where to write the HTML (overwritten)')
    .option(
      '--bundle <file>',
      "embed this goal bundle's checkpoint and key fingerprint (from colony export), so the printed report can be matched to its evidence",
    )
    .option('--json', 'print {path, summary} as JSON')
    .action(
      action((opts: { goal: string; out: string; bundle?: string; json?: boolean }, cmd: Command) => {
        if (!/^\d+$/.test(opts.goal) || !Number.isSafeInteger(Number(opts.goal)) || Number(opts.goal) < 1) {
          throw new CliError(`--goal must be a positive integer, not "${opts.goal}"`);
        }
        if (!opts.out.trim()) throw new CliError('--out must not be empty');
        const goalId = Number(opts.goal);
        const path = resolve(opts.out);
        return withOwner(cmd, async (app, owner) => {
          const [{ getGoal }, { reportData }, { renderReport }] = await Promise.all([
            import('../projections/goal-queries.js'),
            import('../report/data.js'),
            import('../report/html.js'),
          ]);
          const goal = getGoal(app.engine.db, goalId);
          const data = goal && goal.ownerId === owner.userId ? reportData(app, goalId) : null;
          if (!data) throw new CliError(`goal ${goalId} not found`);
          if (opts.bundle !== undefined) data.evidence = await evidenceOf(opts.bundle, goalId, app);
          write(path, renderReport(data));
          const summary = summaryOf(data);
          if (opts.json) return printJson({ path, summary });
          process.stdout.write(`${path}\n${summaryLine(data)}\n`);
        });
      }),
    );
}

/**
 * The bundle must be this log's (its first event, a key this log adopted), whole (checks 1–6 of
 * verify-bundle) and this goal's, and its replay must give its snapshot (check 7); the report then names it.
 */
async function evidenceOf(file: string, goalId: number, app: App): Promise<ReportEvidence> {
  const [
    { readFileSync },
    { createHash },
    { basename },
    { checkBundle },
    { replayBundle },
    { signingKeys },
    { logId },
  ] = await Promise.all([
    import('node:fs'),
    import('node:crypto'),
    import('node:path'),
    import('../evidence/bundle-verify.js'),
    import('../evidence/bundle-replay.js'),
    import('../evidence/keys.js'),
    import('../evidence/checkpoint.js'),
  ]);
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    throw new CliError(`cannot read the bundle ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const keys = signingKeys(app.engine.db).keys.map((k) => k.publicKey);
  const checked = checkBundle(bytes, keys.length > 0 ? keys : ['(this log has no signing key)']);
  const failure = checked.ok ? replayBundle(checked.bundle) : checked.failure;
  if (failure || !checked.ok)
    throw new CliError(`${file} is not a valid goal bundle of this log: ${failure!.code} (${failure!.message})`);
  if (checked.bundle.checkpoint.body.logId !== logId(app.engine.db))
    throw new CliError(`${file} is the bundle of another log`);
  if (checked.summary.goalId !== goalId)
    throw new CliError(`${file} is the bundle of goal ${checked.summary.goalId}, not of goal ${goalId}`);
  const s = checked.summary;
  return {
    file: basename(file),
    sha256: createHash('sha256').update(bytes).digest('hex'),
    events: s.events,
    treeSize: s.checkpoint.treeSize,
    rootHash: s.checkpoint.rootHash,
    signedAt: s.checkpoint.time,
    keyId: s.keyId,
  };
}

function write(path: string, text: string): void {
  try {
    writeFileSync(path, text);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new CliError(
      `cannot write ${path}: ${err.code ?? ''}${err.code ? ' ' : ''}${err.message.replace(/^[A-Z]+: /, '').split(',')[0]}`,
    );
  }
}

function summaryOf(d: ReportData) {
  const s = d.summary;
  return {
    goal_id: d.goal.id,
    title: d.goal.title,
    status: d.goal.status,
    tasks: s.tasks,
    agents: s.agents,
    spawned_agents: s.spawnedAgents,
    runs: s.runs,
    events: s.events,
    artifacts: s.artifacts,
    outcomes: s.outcomes,
    spent_tokens: s.tokens,
    spent_dollars_cents: s.cents,
  };
}

const summaryLine = (d: ReportData): string => {
  const s = d.summary;
  return `Goal ${d.goal.id} "${oneLine(d.goal.title)}" (${d.goal.status}): ${s.tasks} tasks, ${s.agents} agents (${s.spawnedAgents} spawned), ${s.runs} runs, ${s.events} events, ${s.tokens} tokens, ${s.cents}¢`;
};
