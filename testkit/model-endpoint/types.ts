/**
 * The contract between a test and the scripted model endpoint: the endpoint turns each API request (Anthropic
 * Messages, OpenAI Responses, OpenAI Chat Completions) into one `ScriptTurnInput`, asks the test's script, and
 * writes the `ScriptReply` back in that API's own wire format, streamed or not as the client asked.
 */

export type ModelApi = 'anthropic' | 'responses' | 'chat';

export interface ToolCall {
  /** The id the endpoint gave the call (tool_use id, call_id); results name it back. */
  id?: string;
  name: string;
  input: Record<string, unknown>;
}

export interface ToolResult {
  /** The tool call id this answers. */
  id?: string;
  /** Looked up from the matching call earlier in the conversation; absent when no call matches. */
  name?: string;
  /** The result's text parts joined with '\n' (JSON-serialised when the result is not text). */
  text: string;
  isError?: boolean;
}

/**
 * One content part of the conversation, in order. An assistant message with text and two tool calls becomes
 * three entries; each tool result is its own `tool` entry. System and developer text is in `system`, not here.
 */
export interface NormalisedMessage {
  role: 'user' | 'assistant' | 'tool';
  text?: string;
  toolCall?: ToolCall;
  toolResult?: ToolResult;
}

export interface ScriptTurnInput {
  api: ModelApi;
  model: string;
  /** The tools the client offered, exactly as named on the wire (e.g. `mcp__colony__get_goal`). */
  toolNames: string[];
  messages: NormalisedMessage[];
  /** System prompt, plus developer/system messages, joined with '\n'. */
  system: string;
  /** Every text part of the last user message joined with '\n' (Claude Code prepends system-reminders). */
  lastUserText: string;
  /** The tool results since that last user message, i.e. of the turn now running. */
  toolResults: ToolResult[];
  /** Whether the client asked for a streamed reply; the script need not care. */
  stream: boolean;
}

export interface ScriptReply {
  text?: string;
  toolCalls?: { name: string; input: Record<string, unknown> }[];
  /** Tokens reported back; default {input: 10, output: 5}. Cost-aware CLIs price these. */
  usage?: { input: number; output: number };
  /** Answer with this HTTP status and the API's own error body instead of a completion. */
  error?: { status: number; message: string };
}

export type ModelScript = (turn: ScriptTurnInput) => ScriptReply | Promise<ScriptReply>;

export interface RecordedRequest {
  method: string;
  /** Path without the query string (Claude Code posts to `/v1/messages?beta=true`). */
  path: string;
  query: string;
  /** Only the credentials, so a test can assert which key a CLI sent. */
  headers: { authorization?: string; 'x-api-key'?: string };
  /** Parsed JSON body, the raw text when it is not JSON, or undefined when empty. */
  body: unknown;
  /** The API the path was served as; undefined for paths the endpoint does not know (answered 404). */
  api?: ModelApi;
  /** The status the endpoint answered. */
  status?: number;
  /** The message of the script's exception, when it threw (answered 500). */
  error?: string;
}

export interface ModelEndpoint {
  /** `http://127.0.0.1:PORT`, without `/v1` (Anthropic clients add it; OpenAI clients want `${url}/v1`). */
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export interface ModelEndpointOptions {
  /** Model ids listed by `GET /v1/models`; default ['scripted-model']. */
  models?: string[];
}

export const DEFAULT_USAGE = { input: 10, output: 5 };
