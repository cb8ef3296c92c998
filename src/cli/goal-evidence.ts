import type { Command } from 'commander';
import { withOwner } from './owner.js';
import { action, CliError, printJson } from './shared.js';

/**
 * `colony goals evidence ID on|off [--max-rejections N]`: the owner's evidence rule of a goal (set_goal_evidence):
 * on — a leaf is done only by a recipe, an independent peer or the owner (`colony tasks verify`), and the goal
 * completes only when every leaf is; `--max-rejections` — rejected hand-ins sent back to the assignee with the
 * feedback before the next one fails the task. `colony goals evidence ID` alone prints the rule.
 */
export function registerEvidence(goals: Command): void {
  goals
    .command('evidence <id> [rule]')
    .description(
      'show or set "done only with evidence": on (a leaf is done only by a recipe, an independent peer or you) or off, and --max-rejections',
    )
    .option('--max-rejections <n>', 'rejected hand-ins that go back to the assignee before one fails the task (0–10)')
    .option('--json', 'print {"goal_id","require_evidence","max_rejections"}')
    .action(
      action((id: string, rule: string | undefined, opts: { maxRejections?: string; json?: boolean }, cmd: Command) => {
        // (goals.ts's positiveInt would make a cycle: goals.ts registers this command)
        const goalId = Number(id);
        if (!/^\d+$/.test(id) || !Number.isSafeInteger(goalId) || goalId < 1)
          throw new CliError(`goal id must be a positive integer, not "${id}"`);
        if (rule !== undefined && rule !== 'on' && rule !== 'off')
          throw new CliError(`rule must be on or off, not "${rule}"`);
        const limit = opts.maxRejections === undefined ? undefined : rejections(opts.maxRejections);
        return withOwner(cmd, async (app, owner) => {
          const [{ setEvidenceRule }, { goalFor }] = await Promise.all([
            import('../actions/goal-evidence.js'),
            import('../actions/goals.js'),
          ]);
          const by = { key: `user-${owner.userId}`, name: owner.name, tenant: owner.userId };
          const change = rule !== undefined || limit !== undefined;
          const g = change
            ? setEvidenceRule(
                app,
                by,
                goalId,
                { requireEvidence: rule === undefined ? undefined : rule === 'on', maxRejections: limit },
                { actor: `user:${owner.name}` },
              )
            : goalFor(app, by, goalId);
          const maxRejections = g.maxRejections ?? 0;
          if (opts.json)
            return printJson({ goal_id: g.goalId, require_evidence: g.requireEvidence, max_rejections: maxRejections });
          process.stdout.write(
            `Goal ${g.goalId}: done only with evidence ${g.requireEvidence ? 'on' : 'off'}; rejected hand-ins go back to the assignee up to ${maxRejections} time${maxRejections === 1 ? '' : 's'}\n`,
          );
        });
      }),
    );
}

function rejections(raw: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n > 10)
    throw new CliError(`--max-rejections must be an integer from 0 to 10, not "${raw}"`);
  return n;
}
