import { invalidInput } from '../errors.js';
import type { TreeNode } from '../events/proposals.js';
import {
  anyCycle,
  checkBlockerList,
  checkBlockerScope,
  dependencyCycle,
  MAX_BLOCKERS,
  type BlockerFact,
} from './task-dependencies.js';

/**
 * A proposed tree's dependencies, pure: a node waits on tasks of the goal (`blocked_by`, ids) and on other
 * nodes of the same tree (`blocked_by_nodes`, by the paths its errors use: `tree`, `tree.children[0]`…).
 * Checked whole before anything is written — every list, every name, then no cycle among the nodes (tasks
 * from earlier trees never wait on nodes that do not exist yet, so a cycle can only be among the new ones).
 */
type Node = Pick<TreeNode, 'blocked_by' | 'blocked_by_nodes'> & { children?: Node[] };

export function checkTreeBlockers(tree: Node, goalId: number, found: readonly BlockerFact[]): void {
  const nodes = new Map<string, Node>();
  const walk = (node: Node, path: string): void => {
    nodes.set(path, node);
    (node.children ?? []).forEach((child, i) => walk(child, `${path}.children[${i}]`));
  };
  walk(tree, 'tree');
  const graph = new Map<string, string[]>();
  for (const [path, node] of nodes) {
    const ids = node.blocked_by ?? [];
    const paths = node.blocked_by_nodes ?? [];
    if (ids.length + paths.length > MAX_BLOCKERS)
      throw invalidInput(
        `${path}: a task waits on at most ${MAX_BLOCKERS} blockers; got ${ids.length + paths.length}`,
        { path, count: ids.length + paths.length, max: MAX_BLOCKERS },
      );
    checkBlockerList(null, ids, `${path}.blocked_by`, (id) => `#${id}`);
    checkBlockerScope(ids, found, { goalId, projectId: null }, `${path}.blocked_by`);
    checkBlockerList(path, paths, `${path}.blocked_by_nodes`, (p) => p);
    for (const p of paths)
      if (!nodes.has(p))
        throw invalidInput(
          `${path}.blocked_by_nodes: this tree has no node ${JSON.stringify(p)} (paths read "tree", "tree.children[0]", "tree.children[0].children[1]")`,
          { path, node: p },
        );
    if (paths.length > 0) graph.set(path, paths);
  }
  const cycle = anyCycle(graph);
  if (cycle) throw dependencyCycle(cycle, (p) => p);
}

/** Every task id a tree's nodes name as blockers (the facts to read for it). */
export function treeBlockerIds(tree: Node): number[] {
  const ids = new Set<number>();
  const walk = (node: Node): void => {
    for (const id of node.blocked_by ?? []) ids.add(id);
    for (const child of node.children ?? []) walk(child);
  };
  walk(tree);
  return [...ids];
}
