import * as z from 'zod';
import type { App } from '../../app.js';
import { databaseFile } from '../../config.js';
import { GOAL_STATUSES } from '../../events/goals.js';
import { readHead } from '../../engine/store.js';
import { TASK_STATUSES } from '../../events/task-status.js';
import { lastVerifyFile, readLastVerification } from '../../engine/last-verify.js';
import { tenantCounts } from '../../projections/overview-queries.js';
import { defineTool, type AnyTool } from '../tool.js';
import { pathPolicyFor } from '../../actions/projects/paths.js';
import { listProjects } from '../../projections/projects.js';
import { speaker } from '../../events/principals.js';
import { nodeProblemView, projectionStates, verificationView, type NodeProblem } from '../views/integrity.js';

/**
 * system_health (xylocopa's), adapted to Colony: the database answers, where the hash chain's
 * head is and when `colony verify` last checked it (<data>/last-verify.json), whether every projection
 * has applied the log up to the head, then counts. The chain and projections are the whole store's; the
 * counts are the caller's tenant's (like every other read here), with "active" agents = executing now.
 */
const Counts = z.record(z.string(), z.number().int());
const Verification = z.object({
  state: z.enum(['never', 'ok', 'failed', 'unreadable']),
  at: z.string().optional(),
  position: z.number().int().optional(),
  hash: z.string().nullable().optional(),
  reason: z.string().optional(),
  message: z.string().optional(),
});
const ProjectionState = z.object({
  name: z.string(),
  state: z.enum(['OK', 'BEHIND']),
  position: z.number().int(),
  code_version: z.number().int(),
  stored_version: z.number().int().nullable(),
  stale: z.boolean(),
});
const NodeTrouble = z.object({
  kind: z
    .enum(['follow', 'writes_stopped'])
    .describe("follow: cannot bring in other nodes' events; writes_stopped: a write the disk did not confirm"),
  reason: z.string(),
  code: z.string(),
  since: z.string(),
  attempts: z.number().int(),
});
const Health = z.object({
  status: z
    .enum(['ok', 'degraded'])
    .describe('degraded: this node cannot follow its store, or takes no more writes (see node)'),
  node: NodeTrouble.optional().describe(
    "A PostgreSQL node that cannot bring in other nodes' events (what it shows may be behind, and its writes may fail until it follows again), or a Colony whose disk did not confirm a write (no more writes until a restart)",
  ),
  db: z.object({
    state: z.enum(['OK', 'UNREADABLE']),
    path: z.string(),
    journal_mode: z.string().optional(),
    error: z.string().optional(),
  }),
  chain: z.object({ position: z.number().int(), hash: z.string() }).optional(),
  last_verification: Verification.optional(),
  projections: z.array(ProjectionState).optional(),
  projects: z.number().int().optional().describe('Active projects of your team'),
  moved_paths: z
    .array(z.object({ path: z.string(), resolves_to: z.string() }))
    .optional()
    .describe(
      'Registered project paths that resolve elsewhere now (swapped for a symlink): no longer allowed roots, refused on every use',
    ),
  goals: Counts.optional(),
  tasks: Counts.optional(),
  agents: Counts.optional().describe('By runtime status'),
  data_dir: z.string(),
});
type HealthT = z.infer<typeof Health>;

function health(app: App, tenant: number, problem: NodeProblem | null): HealthT {
  const { db } = app.engine;
  const node = nodeProblemView(problem);
  const base = {
    status: node ? ('degraded' as const) : ('ok' as const),
    ...(node ? { node } : {}),
    data_dir: app.dataDir,
  };
  // On a PostgreSQL store the log is there; this process keeps a copy of the tenant in a file (pg/copy-file.ts).
  const where = app.engine.replica?.primary.where;
  const path = where ? `${where}, copied to ${db.name}` : databaseFile(app.dataDir);
  let head;
  try {
    head = readHead(db);
  } catch (e) {
    return { ...base, db: { state: 'UNREADABLE', path, error: (e as Error).message } };
  }
  const projections = projectionStates(app.engine, head.position);
  const counts = tenantCounts(db, tenant);
  const mine = new Set(listProjects(db, tenant, false).map((p) => p.path));
  const moved = pathPolicyFor(app)
    .movedRoots()
    .filter((m) => mine.has(m.root))
    .map((m) => ({ path: m.root, resolves_to: m.resolvesTo }));
  return {
    ...base,
    db: { state: 'OK', path, journal_mode: String(db.pragma('journal_mode', { simple: true })) },
    chain: head,
    last_verification: verificationView(readLastVerification(app.dataDir)),
    projections,
    ...counts,
    moved_paths: moved,
  };
}

const listed = (counts: Record<string, number>, order: readonly string[]): string => {
  const keys = [
    ...order.filter((k) => k in counts),
    ...Object.keys(counts)
      .filter((k) => !order.includes(k))
      .sort(),
  ];
  return keys.map((k) => `${k}=${counts[k]}`).join(', ');
};
const total = (counts: Record<string, number>): number => Object.values(counts).reduce((a, b) => a + b, 0);
const withStatuses = (counts: Record<string, number>, order: readonly string[]) =>
  total(counts) ? ` (${listed(counts, order)})` : '';

function verificationLine(h: HealthT): string {
  const v = h.last_verification!;
  switch (v.state) {
    case 'never':
      return '- last_verification: never (run `colony verify`)';
    case 'unreadable':
      return `- last_verification: UNREADABLE (\`${lastVerifyFile(h.data_dir)}\`)`;
    case 'ok':
      return `- last_verification: OK at ${v.at}, up to position ${v.position} (${h.chain!.position - v.position!} events since)`;
    case 'failed':
      return `- last_verification: FAILED at ${v.at}, at position ${v.position}: ${v.reason} (${v.message})`;
    default: {
      const never: never = v.state;
      return never;
    }
  }
}

export function healthText(h: HealthT): string {
  const node = h.node
    ? [
        h.node.kind === 'writes_stopped'
          ? `- writes: STOPPED since ${h.node.since} (${h.node.code}, ${h.node.attempts} refused): ${h.node.reason}`
          : `- node: DEGRADED since ${h.node.since} (${h.node.code}, ${h.node.attempts} attempts): ${h.node.reason}`,
      ]
    : [];
  if (h.db.state === 'UNREADABLE')
    return ['# Colony health', ...node, `- db: UNREADABLE (\`${h.db.path}\`: ${h.db.error})`].join('\n');
  const p = h.projections!;
  const agents = h.agents!;
  return [
    '# Colony health',
    ...node,
    `- db: OK (\`${h.db.path}\`, journal ${h.db.journal_mode})`,
    `- chain: head at position ${h.chain!.position}, hash ${h.chain!.hash}`,
    verificationLine(h),
    `- projections: ${p.filter((x) => x.state === 'OK').length}/${p.length} at the head`,
    ...p.map(
      (x) =>
        `  - ${x.name}: ${x.state === 'OK' ? `OK (position ${x.position})` : `BEHIND (position ${x.position} of ${h.chain!.position}${x.stale ? ', stale' : ''}${x.stored_version !== x.code_version ? `, version ${x.stored_version ?? 'none'} of ${x.code_version}` : ''})`}`,
    ),
    `- projects: ${h.projects} (active)`,
    ...(h.moved_paths ?? []).map(
      (m) => `  - MOVED: \`${m.path}\` now resolves to \`${m.resolves_to}\`: refused until it is itself again`,
    ),
    `- goals: ${total(h.goals!)}${withStatuses(h.goals!, GOAL_STATUSES)}`,
    `- tasks: ${total(h.tasks!)} (all-time)${withStatuses(h.tasks!, TASK_STATUSES)}`,
    `- agents: ${total(agents)} total, ${agents.executing ?? 0} active${withStatuses(agents, ['idle', 'executing', 'error', 'stopped'])}`,
    `- data_dir: \`${h.data_dir}\``,
  ].join('\n');
}

const systemHealth = defineTool({
  name: 'system_health',
  title: 'System health',
  description:
    "Colony's health at a glance: the database answers (db: OK), the hash chain's head (position and hash) and the last `colony verify` (when, up to which position, whether it held — \"never\" if it was not run), whether each projection has applied the log up to the head (OK / BEHIND), then your team's counts: active projects, goals and tasks by status, agents by runtime status (active = executing).",
  trust: 'read',
  surface: 'agent',
  module: 'health',
  input: z.strictObject({}),
  output: Health,
  handler: (ctx) => health(ctx.app, speaker(ctx.caller).tenant, ctx.node.problem()),
  text: healthText,
});

export const healthTools: readonly AnyTool[] = [systemHealth];
