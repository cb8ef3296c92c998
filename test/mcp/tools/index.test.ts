import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as z from 'zod';
import { ToolRegistry } from '../../../src/mcp/registry.js';
import { inputJsonSchema } from '../../../src/mcp/results.js';
import { annotationsFor, defineTool, FORBIDDEN_AGENT_VERBS } from '../../../src/mcp/tool.js';
import { buildToolRegistry } from '../../../src/mcp/tools/index.js';

/** Static rules every registered tool keeps. */
const tools = buildToolRegistry().list();

describe('the tool registry', () => {
  it('has no agent-surface tool whose name contains a forbidden verb', () => {
    const offenders = tools.filter(
      (t) => t.surface === 'agent' && FORBIDDEN_AGENT_VERBS.some((verb) => t.name.includes(verb)),
    );
    assert.deepEqual(
      offenders.map((t) => t.name),
      [],
    );
  });

  it('gives every tool a description, a strict input schema and annotations matching its trust class', () => {
    for (const t of tools) {
      assert.ok(t.description.length >= 40, `${t.name}: description`);
      assert.match(t.name, /^[a-z][a-z0-9_]*$/, `${t.name}: snake_case`);
      assert.equal(inputJsonSchema(t).additionalProperties, false, `${t.name}: strict input`);
      const a = annotationsFor(t);
      assert.equal(a.readOnlyHint, t.trust === 'read', `${t.name}: readOnlyHint`);
      assert.equal(a.destructiveHint, t.trust === 'destructive', `${t.name}: destructiveHint`);
      if (t.trust === 'destructive') assert.equal(t.surface, 'owner', `${t.name}: destructive tools are owner tools`);
    }
  });

  it('keeps the first registration of a name and ignores later ones', () => {
    const make = (description: string) =>
      defineTool({
        name: 'dup_tool',
        title: 'Dup',
        description,
        trust: 'read',
        surface: 'agent',
        module: 'test',
        input: z.strictObject({}),
        handler: () => ({}),
      });
    const first = make('the first registration of this name');
    const registry = new ToolRegistry().register(first, make('a later registration that must be ignored'));
    assert.equal(registry.get('dup_tool'), first);
    assert.equal(registry.list().length, 1);
  });

  it('lists tools sorted by name', () => {
    const names = tools.map((t) => t.name);
    assert.deepEqual(names, [...names].sort());
  });
});
