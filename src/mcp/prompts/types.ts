import type { McpContext } from '../context.js';
import { type Caller } from '../../events/principals.js';

/** MCP prompts as plain objects shaped like the wire types (prompts/list, prompts/get): no SDK import. */
export interface PromptArgument {
  name: string;
  description: string;
  required: boolean;
}
export interface PromptEntry {
  name: string;
  title: string;
  description: string;
  arguments: PromptArgument[];
}
export interface PromptMessage {
  role: 'user' | 'assistant';
  content: { type: 'text'; text: string };
}
export interface PromptResult {
  description: string;
  messages: PromptMessage[];
}

export interface PromptDefinition {
  entry: PromptEntry;
  /** The tools an agent needs in its tool scope for this prompt (all of them): the read tools that show its data. */
  needs: readonly string[];
  render(ctx: McpContext, caller: Caller, args: Readonly<Record<string, string>>): PromptResult;
}

export const userMessage = (text: string): PromptMessage => ({ role: 'user', content: { type: 'text', text } });
