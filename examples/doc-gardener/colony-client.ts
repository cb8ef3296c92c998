import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/**
 * The agents' only way into Colony: an MCP client over Streamable HTTP with the URL and token the
 * harness put in the environment (COLONY_URL, COLONY_TOKEN). It meters what goes over the wire so a
 * run can report deterministic usage: about 4 characters per token, as an LLM agent would have read
 * the tool results (tokens in) and written the tool arguments (tokens out).
 */
export type Json = Record<string, unknown>;

export class ToolError extends Error {
  constructor(
    readonly tool: string,
    readonly text: string,
  ) {
    super(`${tool} failed: ${text}`);
  }
  /** The error code Colony puts first in an error's text, e.g. ErrAlreadyClaimed. */
  get code(): string {
    return /^(\w+):/.exec(this.text)?.[1] ?? '';
  }
}

export class Colony {
  charsIn = 0;
  charsOut = 0;

  private constructor(
    private readonly client: Client,
    readonly agent: string,
  ) {}

  static async connect(env: NodeJS.ProcessEnv = process.env): Promise<Colony> {
    const url = env.COLONY_URL;
    const token = env.COLONY_TOKEN;
    if (!url || !token)
      throw new Error('COLONY_URL and COLONY_TOKEN must be set (Colony sets them for every run it starts)');
    const client = new Client({ name: `doc-gardener-${env.COLONY_AGENT ?? 'agent'}`, version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    return new Colony(client, env.COLONY_AGENT ?? '');
  }

  /** Calls a tool; its structured result, or a ToolError with Colony's error text. */
  async call<T = Json>(name: string, args: Json = {}): Promise<T> {
    this.charsOut += JSON.stringify(args).length + name.length;
    const result = await this.client.callTool({ name, arguments: args });
    const content = (result.content ?? []) as { type: string; text?: string }[];
    const text = content.map((c) => c.text ?? '').join('\n');
    this.charsIn += text.length;
    if (result.isError) throw new ToolError(name, text);
    return (result.structuredContent ?? JSON.parse(text || '{}')) as T;
  }

  /** Counts text the agent read or wrote outside tool calls (its prompt, files, command output). */
  read(text: string): void {
    this.charsIn += text.length;
  }

  wrote(text: string): void {
    this.charsOut += text.length;
  }

  async close(): Promise<void> {
    await this.client.close().catch(() => undefined);
  }
}

/** Claude Code's final `-p --output-format json` object, from the metered characters. */
export function usageLine(colony: Colony | null, prompt: string, result: string): string {
  const tokensIn = Math.max(1, Math.ceil((prompt.length + (colony?.charsIn ?? 0)) / 4));
  const tokensOut = Math.max(1, Math.ceil((result.length + (colony?.charsOut ?? 0)) / 4));
  // Priced like a mid-size model: $3 per million tokens in, $15 per million out.
  const usd = Math.round(tokensIn * 3 + tokensOut * 15) / 1e6;
  return JSON.stringify({
    type: 'result',
    subtype: 'success',
    is_error: false,
    result,
    total_cost_usd: usd,
    usage: { input_tokens: tokensIn, output_tokens: tokensOut },
  });
}

/** Waits `ms`; agents poll with bounded waits, never forever. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
