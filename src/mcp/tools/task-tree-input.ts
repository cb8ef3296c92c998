import * as z from 'zod';
import { DomainError } from '../../errors.js';
import type { TreeRequest } from '../../events/proposals.js';
import type { PathPolicy } from '../../actions/projects/paths.js';

/**
 * A task tree as propose_task_tree takes it: the node schema (zod), and the check that turns it into
 * the tree the proposal action resolves — a command verifier names an owner's recipe, never a command.
 */
export const Budget = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export const VerifierConfig = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('auto') }),
  z.strictObject({
    kind: z.literal('peer'),
    agent_id: z.number().int().positive().describe('The agent whose verify_task decides'),
  }),
  z.strictObject({
    kind: z.literal('command'),
    recipe: z
      .string()
      .trim()
      .min(1)
      .max(64)
      .optional()
      .describe(
        'The name of a verifier recipe your owner registered (list_verifiers): its command runs; exit 0 approves',
      ),
    cwd: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe('Working directory inside the allowed roots, used when the recipe fixes none (default: the workspace)'),
    cmd: z
      .unknown()
      .optional()
      .describe('Not accepted: a raw shell command is refused with ErrRawCommandRefused — name a recipe instead'),
    timeout_sec: z.unknown().optional().describe('Not accepted: the recipe sets the timeout'),
  }),
]);

// The schema shape of a node; the handler checks the command verifier's fields (recipe, no raw cmd) with clear codes.
type NodeInput = Omit<TreeRequest, 'verifier_config' | 'children'> & {
  verifier_config?: z.infer<typeof VerifierConfig>;
  children?: NodeInput[];
};

export const TaskNode: z.ZodType<NodeInput> = z.lazy(() =>
  z.strictObject({
    title: z.string().trim().min(3).max(200),
    description: z.string().trim().min(10).max(16_000),
    acceptance_criteria: z.string().max(16_000).optional(),
    billing_code: z
      .string()
      .trim()
      .min(1)
      .max(64)
      .optional()
      .describe('Cost and reputation domain; inherited from the parent, else "default"'),
    budget_tokens: Budget.optional(),
    budget_dollars_cents: Budget.optional(),
    verifier_config: VerifierConfig.optional().describe('auto (default) | peer | command'),
    heartbeat_config: z
      .strictObject({
        source: z.enum(['task_assignment', 'task_timer', 'verification_requested']).optional(),
        interval_sec: z.number().int().min(10).max(86_400).optional(),
        max_budget: Budget.optional().describe('Cents a claim reserves against the goal budget'),
      })
      .optional(),
    blocked_by: z
      .array(z.number().int().positive())
      .max(100)
      .optional()
      .describe(
        "Ids of tasks of this goal (from earlier trees) this task waits on: it can be claimed once they're done",
      ),
    blocked_by_nodes: z
      .array(z.string().max(4000))
      .max(100)
      .optional()
      .describe(
        'Other nodes of this tree this task waits on, by path: "tree" (the root), "tree.children[0]", "tree.children[1].children[0]"',
      ),
    children: z.array(TaskNode).max(500).optional(),
  }),
);

/**
 * A command verifier names an owner's recipe — a raw shell command from the caller is refused: nothing
 * runs on the host unless the owner approved that exact command line — and runs in a directory inside
 * the allowed roots of the path policy, resolved now.
 */
export function checkedTree(node: NodeInput, policy: PathPolicy, path: string): TreeRequest {
  const v = node.verifier_config;
  let verifier: TreeRequest['verifier_config'] = v?.kind === 'command' ? undefined : v;
  if (v?.kind === 'command') {
    const field = `${path}.verifier_config`;
    if (v.cmd !== undefined || v.timeout_sec !== undefined) {
      throw new DomainError(
        'ErrRawCommandRefused',
        `${field}: a raw shell command is refused — name one of your owner's verifier recipes ({"kind":"command","recipe":"NAME"}; list_verifiers shows them; the owner adds them with \`colony verifiers add\`)`,
        { field },
      );
    }
    if (v.recipe === undefined)
      throw new DomainError('ErrInvalidInput', `${field}.recipe: a command verifier names a verifier recipe`, {
        field: `${field}.recipe`,
      });
    verifier = {
      kind: 'command',
      recipe: v.recipe,
      ...(v.cwd !== undefined ? { cwd: guardCwd(policy, v.cwd, `${field}.cwd`) } : {}),
    };
  }
  const { verifier_config: _given, children: kids, ...rest } = node;
  const children = kids?.map((c, i) => checkedTree(c, policy, `${path}.children[${i}]`));
  return { ...rest, ...(verifier ? { verifier_config: verifier } : {}), ...(children ? { children } : {}) };
}
function guardCwd(policy: PathPolicy, cwd: string, field: string): string {
  try {
    return policy.guard({ cwd }).cwd as string;
  } catch (e) {
    if (e instanceof DomainError)
      throw new DomainError(e.code, e.message.replace('cwd', field), { ...e.details, field });
    throw e;
  }
}
