import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Router } from 'express';
import * as z from 'zod';
import { goalFor } from '../actions/goals.js';
import { forkGoal, forkJson } from '../evidence/fork.js';
import type { McpContext } from '../mcp/context.js';
import { actor, body, Id, ownerOf, parse, speakerOf } from './api-common.js';

/**
 * "Fork from here" in the console's time travel: `POST /api/goals/:id/fork {position}` writes a what-if copy of
 * the goal's history up to that position (evidence/fork.ts, what `colony fork` does) to a new data dir under
 * this one, `<data>/forks/goal-<id>-at-<position>-<time>`, and answers with the commands that start Colony on
 * it. The owner's alone. No owner token is made for the fork here (a token is not shown in a page): the first
 * command makes one, on the host, where the fork's files are.
 */
const ForkBody = z.strictObject({ position: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER) });

export function mountFork(router: Router, ctx: McpContext): void {
  router.post('/goals/:id/fork', (req, res) => {
    ownerOf(req, 'forks goals');
    const speaker = speakerOf(req);
    const goal = goalFor(ctx.app, speaker, parse(Id, req.params.id, 'id'));
    const { position } = body(ForkBody, req);
    const { engine, dataDir } = ctx.app;
    engine.settle(); // the fork reads the log on this connection: what the server committed is in it
    const stamp = engine.clock().toISOString().replace(/[-:.]/g, '');
    const forks = join(dataDir, 'forks');
    mkdirSync(forks, { recursive: true, mode: 0o700 });
    const r = forkGoal(engine.db, {
      goalId: goal.goalId,
      position,
      target: join(forks, `goal-${goal.goalId}-at-${position}-${stamp}`),
      originDataDir: dataDir,
      actor: actor(req).actor,
      tenant: speaker.tenant,
      ownerToken: false,
      clock: engine.clock,
    });
    const dir = shellQuote(r.dataDir);
    res.status(201).json({
      ...forkJson(r),
      commands: [`colony token create --data ${dir}`, `colony serve --data ${dir} --port 7071`],
    });
  });
}

/** A path as one shell word (the console shows commands to paste). */
const shellQuote = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
