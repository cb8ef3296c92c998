import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { anyCycle, cycleThrough, type DependencyGraph } from '../../src/commands/task-dependencies.js';
import { checkTreeBlockers } from '../../src/commands/tree-dependencies.js';
import { DomainError } from '../../src/errors.js';

/**
 * Cycle detection over task dependencies (a task → the tasks it waits on), as properties: any acyclic graph
 * stays acyclic under an edge that follows its order, and an edge against a path closes a cycle that is
 * reported as a real one — each node waits on the next, from the task back to itself.
 */

/** An acyclic graph: node i waits only on nodes below i. */
const acyclic = fc
  .integer({ min: 2, max: 24 })
  .chain((n) =>
    fc.tuple(fc.constant(n), fc.array(fc.array(fc.nat(n - 1), { maxLength: 4 }), { minLength: n, maxLength: n })),
  )
  .map(([n, lists]) => {
    const graph = new Map<number, number[]>();
    for (let i = 0; i < n; i++) graph.set(i, [...new Set(lists[i]!.filter((j) => j < i))]);
    return graph;
  });

function reachable(graph: DependencyGraph<number>, from: number, to: number): boolean {
  const seen = new Set<number>();
  const stack = [from];
  while (stack.length) {
    const n = stack.pop()!;
    if (n === to) return true;
    if (seen.has(n)) continue;
    seen.add(n);
    stack.push(...(graph.get(n) ?? []));
  }
  return false;
}

/** Each consecutive pair is an edge of `graph`, and the cycle starts and ends at `start`. */
function isRealCycle<K>(graph: DependencyGraph<K>, cycle: readonly K[], start?: K): boolean {
  if (cycle.length < 2 || cycle[0] !== cycle.at(-1)) return false;
  if (start !== undefined && cycle[0] !== start) return false;
  return cycle.slice(1).every((next, i) => (graph.get(cycle[i]!) ?? []).includes(next));
}

describe('task dependency cycles', () => {
  it('an acyclic graph has no cycle, and an edge that follows its order closes none', () => {
    fc.assert(
      fc.property(acyclic, fc.nat(), fc.nat(), (graph, a, b) => {
        assert.equal(anyCycle(graph), null);
        const [x, y] = [a % graph.size, b % graph.size];
        const [hi, lo] = [Math.max(x, y), Math.min(x, y)];
        fc.pre(hi !== lo);
        const blockers = [...new Set([...graph.get(hi)!, lo])];
        assert.equal(cycleThrough(graph, hi, blockers), null);
      }),
      { numRuns: 300 },
    );
  });

  it('an edge against a path closes a cycle: detected, and reported as a real cycle through the task', () => {
    fc.assert(
      fc.property(acyclic, fc.nat(), fc.nat(), (graph, a, b) => {
        const [from, to] = [a % graph.size, b % graph.size];
        fc.pre(from === to || reachable(graph, from, to));
        // `from` waits (maybe through others) on `to`: `to` waiting on `from` closes the cycle.
        const blockers = [...graph.get(to)!, from];
        const cycle = cycleThrough(graph, to, blockers);
        assert.ok(cycle, `expected a cycle through ${to}`);
        const after = new Map(graph).set(to, blockers);
        assert.ok(isRealCycle(after, cycle, to), `not a cycle: ${cycle.join(' → ')}`);
        const any = anyCycle(after);
        assert.ok(any && isRealCycle(after, any), 'the whole-graph search finds a real cycle too');
      }),
      { numRuns: 300 },
    );
  });

  it("a proposed tree's nodes waiting on each other in a circle are refused with the paths in order", () => {
    const tree = {
      children: [
        { blocked_by_nodes: ['tree.children[2]'] },
        { blocked_by_nodes: ['tree.children[0]'] },
        { blocked_by_nodes: ['tree.children[1]'] },
      ],
    };
    assert.throws(
      () => checkTreeBlockers(tree, 1, []),
      (e: unknown) =>
        e instanceof DomainError &&
        e.code === 'ErrDependencyCycle' &&
        isRealCycle(
          new Map(tree.children.map((c, i) => [`tree.children[${i}]`, c.blocked_by_nodes])),
          e.details!.cycle as string[],
        ),
    );
    const chain = {
      children: [{}, { blocked_by_nodes: ['tree.children[0]'] }, { blocked_by_nodes: ['tree.children[1]'] }],
    };
    assert.doesNotThrow(() => checkTreeBlockers(chain, 1, []));
    const missing = { children: [{ blocked_by_nodes: ['tree.children[5]'] }] };
    assert.throws(
      () => checkTreeBlockers(missing, 1, []),
      /tree.children\[0\].blocked_by_nodes: this tree has no node/,
    );
    const self = { children: [{ blocked_by_nodes: ['tree.children[0]'] }] };
    assert.throws(() => checkTreeBlockers(self, 1, []), /cannot be blocked by itself/);
  });
});
