import { createHash } from 'node:crypto';
import { canonicalize } from '../canonical.js';

/**
 * An agent's config and its hash. The hash covers the six fields that define how the agent behaves; a
 * changed hash is a new config, and reputation earned under the old one stays with the old hash.
 */
export interface AgentMcpServer {
  name: string;
  url: string;
  transport: string;
}
export interface AgentConfig {
  model: string;
  system_prompt: string;
  tool_scope: readonly string[];
  skills: readonly string[];
  mcp_servers: readonly AgentMcpServer[];
  subagents: readonly string[];
}

/** Code-point order, as Go's sort.Strings (JS's default sort compares UTF-16 units). */
export const byCodePoint = (a: string, b: string): number => {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
};

/** Lowercase hex sha256 of the RFC 8785 JSON of the six config fields; arrays sorted, servers reduced. */
export function configHash(c: AgentConfig): string {
  const servers = c.mcp_servers
    .map((s) => ({ name: s.name, transport: s.transport, url: s.url }))
    .sort((a, b) => byCodePoint(a.name, b.name) || byCodePoint(a.url, b.url) || byCodePoint(a.transport, b.transport));
  const canonical = canonicalize({
    mcp_servers: servers,
    model: c.model,
    skills: [...c.skills].sort(byCodePoint),
    subagents: [...c.subagents].sort(byCodePoint),
    system_prompt: c.system_prompt,
    tool_scope: [...c.tool_scope].sort(byCodePoint),
  });
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}
