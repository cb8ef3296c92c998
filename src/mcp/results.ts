import { randomBytes } from 'node:crypto';
import * as z from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { DomainError } from '../errors.js';
import { log } from '../log.js';
import type { AnyTool } from './tool.js';

/**
 * The one place errors become MCP results. A DomainError is `isError` with the text
 * `<Code>: <message>` and, for tools with an output schema, `structuredContent.error`; anything else is
 * `ErrInternal` with a correlation id — its stack goes to the log, never to the caller.
 */
export const ErrorEnvelope = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() }),
});

export function okResult(tool: AnyTool, value: unknown): CallToolResult {
  const text = tool.text ? tool.text(value) : JSON.stringify(value);
  const result: CallToolResult = { content: [{ type: 'text', text }] };
  if (tool.output) result.structuredContent = value as Record<string, unknown>;
  return result;
}

export function errorResult(tool: AnyTool | undefined, error: unknown): { result: CallToolResult; code: string } {
  const e = toDomainError(error);
  const result: CallToolResult = { isError: true, content: [{ type: 'text', text: `${e.code}: ${e.message}` }] };
  if (tool?.output)
    result.structuredContent = {
      error: { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) },
    };
  return { result, code: e.code };
}

function toDomainError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  const correlationId = randomBytes(6).toString('hex');
  log.error({ err: error, correlationId }, 'tool call failed');
  return new DomainError('ErrInternal', `internal error (correlation id ${correlationId})`, { correlationId });
}

/**
 * The outputSchema a tool advertises: its own shape, or the error envelope — clients (the SDK's among
 * them) validate structuredContent against it, error results included.
 */
export function outputJsonSchema(tool: AnyTool): Record<string, unknown> | undefined {
  if (!tool.output) return undefined;
  const shapes = [jsonSchema(tool.output), jsonSchema(ErrorEnvelope)];
  if (tool.trust === 'destructive') shapes.push(jsonSchema(ConfirmationRequired));
  return { type: 'object', anyOf: shapes };
}

/** What a destructive tool answers first: call again with `confirmation_token` = `confirm_token`. */
export const ConfirmationRequired = z.object({
  confirmation_required: z.literal(true),
  tool_name: z.string(),
  args_preview: z.unknown(),
  confirm_token: z.string(),
  message: z.string(),
});

export function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-7',
    io: 'output',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return rest;
}

export function inputJsonSchema(tool: AnyTool): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(tool.input, {
    target: 'draft-7',
    io: 'input',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  if (tool.trust !== 'destructive') return { ...rest, type: 'object' };
  const properties = {
    ...(rest.properties as Record<string, unknown> | undefined),
    confirmation_token: {
      type: 'string',
      minLength: 1,
      description: 'The confirm_token of the first call: runs the tool (one use, 60 s, same arguments)',
    },
  };
  return { ...rest, type: 'object', properties };
}
