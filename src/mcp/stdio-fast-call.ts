import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { JSONRPCMessage, MessageExtraInfo, Transport, TransportSendOptions } from '@modelcontextprotocol/server';
import type { McpContext } from './context.js';
import { answerToolCall, plainToolCall } from './fast-call.js';
import type { Caller } from '../events/principals.js';

/**
 * The stdio wire of `colony stdio` (stdio.ts) with plain `tools/call` answered by Colony (fast-call.ts)
 * once the connection is a 2025-11-25 one past its handshake — the SDK has answered its `initialize`.
 * Before that, on a 2026-07-28 connection (no initialize; envelopes the SDK must check), and for every
 * other message, the SDK's serveStdio gets the message as from its own StdioServerTransport. Answers of
 * both share the one stdout: each is written as one whole line, so they never interleave.
 */
export class FastCallStdio implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  /** The ids of `initialize` requests seen, and whether the SDK has answered one with a result. */
  private readonly initializing = new Set<unknown>();
  private ready = false;

  constructor(
    private readonly ctx: McpContext,
    /** The principal behind the connection's token, re-checked on every call. */
    private readonly caller: () => Caller | null,
    private readonly inner: Transport = new StdioServerTransport(),
  ) {}

  start(): Promise<void> {
    this.inner.onmessage = (message, extra) => this.route(message, extra);
    this.inner.onerror = (error) => this.onerror?.(error);
    this.inner.onclose = () => this.onclose?.();
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (!this.ready && 'result' in message && this.initializing.has(message.id)) this.ready = true;
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private route(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    const call = this.ready ? plainToolCall(message) : null;
    if (!call) {
      if ('method' in message && message.method === 'initialize' && 'id' in message) this.initializing.add(message.id);
      return this.onmessage?.(message, extra);
    }
    void answerToolCall(this.ctx, this.caller(), call).then(
      (answer) => this.inner.send(answer as JSONRPCMessage),
      (error: Error) => this.onerror?.(error),
    );
  }
}
