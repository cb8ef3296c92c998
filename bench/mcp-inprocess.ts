import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createOwner } from '../src/actions/principals.js';
import { openApp } from '../src/app.js';
import { authenticate } from '../src/mcp/auth.js';
import { createMcpContext } from '../src/mcp/context.js';
import { createMcpServer } from '../src/mcp/server.js';
import { buildToolRegistry } from '../src/mcp/tools/index.js';
import { figure, median, PAYLOAD_TEXT, type Figure } from './util.js';

/**
 * mcp_inprocess_send_message_per_s: `send_message` calls/s against `whoami` calls/s through the same SDK
 * Client, over the SDK's InMemoryTransport into Colony's MCP server (auth, scope, validation, audit,
 * group commit, handler: everything but HTTP), 10 callers at once, FULL. What a write costs beyond a read
 * with no socket, no express and no other process on the cores: the figure that moves when the write path
 * does, steadier than the same ratio from outside (bench/mcp-ext.ts), which the machine's load sways.
 * Rounds alternate the two; medians count.
 */
const CALLERS = 10;

export async function benchMcpInProcess(
  dir: string,
  options: { calls: number; rounds: number; warmup: number },
): Promise<Figure> {
  const app = openApp({ dataDir: join(dir, 'mcp-inprocess') });
  const ctx = createMcpContext(app, buildToolRegistry());
  const { token } = createOwner(app, 'owner', { actor: 'system' });
  const server = createMcpServer(ctx, () => authenticate(app, token));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'colony-bench', version: '0' });
  await client.connect(clientSide);
  try {
    await client.listTools();
    const first = await client.callTool({
      name: 'send_message',
      arguments: { channel: 'requests', body: PAYLOAD_TEXT },
    });
    const channelId = (first.structuredContent as { channel_id?: number } | undefined)?.channel_id;
    if (first.isError || typeof channelId !== 'number') throw new Error(`send_message: ${JSON.stringify(first)}`);
    const send = { name: 'send_message', arguments: { channel_id: channelId, body: PAYLOAD_TEXT } };
    const whoami = { name: 'whoami', arguments: {} };
    const rate = async (call: typeof send | typeof whoami, calls: number): Promise<number> => {
      let left = calls;
      const start = process.hrtime.bigint();
      await Promise.all(
        Array.from({ length: CALLERS }, async () => {
          while (left-- > 0) {
            const result = await client.callTool(call);
            if (result.isError) throw new Error(`${call.name}: ${JSON.stringify(result.content)}`);
          }
        }),
      );
      return calls / (Number(process.hrtime.bigint() - start) / 1e9);
    };
    await rate(whoami, options.warmup);
    await rate(send, options.warmup);
    const rates = { send: [] as number[], whoami: [] as number[] };
    for (let r = 0; r < options.rounds; r++) {
      rates.whoami.push(await rate(whoami, options.calls));
      rates.send.push(await rate(send, options.calls));
    }
    return figure(median(rates.send), 'calls/s', median(rates.whoami));
  } finally {
    await client.close();
    ctx.audit.close();
    app.engine.close();
  }
}
