import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ok } from './calls.js';

/**
 * A pending task-tree proposal worth reviewing, made through real tool calls: the owner registers a
 * verifier recipe, the agent (the goal's coordinator) proposes a tree whose leaf runs it. Every text
 * the agent writes is hostile — markup, a script end tag, a bidi override — so the card must show
 * it as text. The recipe's command line is the owner's and must appear on the card in full.
 */
export const HOSTILE_TITLE = 'Ship it <img src=x onerror="window.__pwned=1"></script><script>window.__pwned=2</script>';
export const HOSTILE_REASONING = 'Trust me \u202eevil\u202c <b>bold</b> <!-- <script>window.__pwned=3</script>';
export const RECIPE_COMMAND = 'npm test -- --reporter=dot && node scripts/check-links.mjs --strict "docs/**/*.md"';

export interface PendingTree {
  goalId: number;
  proposalId: number;
  messageId: number;
}

export async function proposeHostileTree(owner: Client, agent: Client, recipe = 'unit-tests'): Promise<PendingTree> {
  await ok(owner, 'add_verifier', { name: recipe, command: RECIPE_COMMAND, timeout_sec: 120 });
  const g = await ok(agent, 'create_goal', {
    title: HOSTILE_TITLE,
    description: 'Every page of the docs accurate against the code, checked by the tests.',
    coordinator_config: 'worker',
  });
  const p = await ok(agent, 'propose_task_tree', {
    goal_id: g.goal_id,
    reasoning: HOSTILE_REASONING,
    tree: {
      title: 'Check the docs',
      description: 'Read each page against the code.',
      budget_tokens: 5000,
      children: [
        {
          title: 'Fix the broken links',
          description: 'Every link resolves.',
          verifier_config: { kind: 'command', recipe },
        },
        { title: 'Rewrite the quick start', description: 'A new user gets to a running server.' },
      ],
    },
  });
  return {
    goalId: g.goal_id as number,
    proposalId: p.proposal_id as number,
    messageId: p.proposal_message_id as number,
  };
}
