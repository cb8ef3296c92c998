import { autoApprove } from '../actions/proposals.js';
import type { App } from '../app.js';
import { isDomainError } from '../errors.js';
import { log as defaultLog } from '../log.js';
import { proposalsOf } from '../projections/proposal-queries.js';
import { LogTick } from './log-tick.js';

/**
 * `colony serve --auto-approve` (for unattended demos): every pending task-tree and agent
 * proposal of the serving owner's goals is approved as soon as it is seen (another owner's goals on the
 * same store are theirs to decide) — as goal approval mode `auto` does, recorded
 * as approved by `system` — whether it was made through this process or another (a `colony stdio`
 * agent). Only the owner starts `serve`, so only the owner can turn it on; it never widens what runs on
 * the host: a tree still names only the owner's verifier recipes, and a spawned agent still inherits
 * its parent's backend. A proposal whose approval is refused (a recipe removed since) is logged once and
 * left pending for the owner.
 */
export class AutoApprover {
  private readonly refused = new Set<number>();
  private readonly ticks: LogTick;

  constructor(
    private readonly app: App,
    private readonly ownerId: number,
    private readonly log: Pick<typeof defaultLog, 'info' | 'warn'> = defaultLog,
    pollMs = 1_000,
  ) {
    this.ticks = new LogTick(
      app,
      () => this.approveAll(),
      pollMs,
      (e) => e.type === 'TaskTreeProposed' || e.type === 'AgentProposed',
    );
  }

  start(): this {
    this.ticks.start().schedule();
    return this;
  }

  stop(): void {
    this.ticks.stop();
  }

  private approveAll(): void {
    if (!this.ticks.running) return;
    for (const p of proposalsOf(this.app.engine.db, this.ownerId, 'pending', 100).reverse()) {
      if (this.refused.has(p.proposalId)) continue;
      try {
        const { taskIds } = autoApprove(this.app, p.ownerId, p.proposalId, undefined);
        this.log.info(
          { proposalId: p.proposalId, goalId: p.goalId, kind: p.kind, tasks: taskIds.length },
          'proposal approved by serve --auto-approve',
        );
      } catch (err) {
        if (!isDomainError(err)) throw err;
        this.refused.add(p.proposalId);
        this.log.warn(
          { proposalId: p.proposalId, goalId: p.goalId, code: err.code },
          'serve --auto-approve could not approve a proposal: it waits for the owner',
        );
      }
    }
  }
}
