import type { KnownTools } from '../commands/tool-scope.js';
import { log } from '../log.js';
import type { AnyTool, ToolLookup } from './tool.js';

/**
 * Every tool Colony serves, by name. First registration wins (codomyrmex's rule): a later tool with
 * the same name is ignored with a warning, so no module can replace a published contract.
 */
export class ToolRegistry implements ToolLookup {
  private readonly tools = new Map<string, AnyTool>();
  /** known() and list() as of the last registration: asked on every spawn and every tools/list. */
  private knownCache: KnownTools | null = null;
  private listCache: readonly AnyTool[] | null = null;

  register(...tools: readonly AnyTool[]): this {
    this.knownCache = null;
    this.listCache = null;
    for (const tool of tools) {
      const existing = this.tools.get(tool.name);
      if (existing) {
        if (existing !== tool)
          log.warn(
            { tool: tool.name, module: tool.module, kept: existing.module },
            `ignoring duplicate MCP tool ${tool.name}; first registration wins`,
          );
        continue;
      }
      this.tools.set(tool.name, tool);
    }
    return this;
  }

  get(name: string): AnyTool | undefined {
    return this.tools.get(name);
  }

  /** Every tool's name and surface: the fact an agent's tool scope is checked against (commands/tool-scope.ts). */
  known(): KnownTools {
    this.knownCache ??= new Map([...this.tools.values()].map((t) => [t.name, t.surface]));
    return this.knownCache;
  }

  /** Every tool, sorted by name (a fresh array: the caller may filter or sort it). */
  list(): AnyTool[] {
    this.listCache ??= [...this.tools.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return [...this.listCache];
  }
}
