import * as z from 'zod';
import { DomainError } from '../../errors.js';

/**
 * The result convention of every xylocopa tool in Colony: xylocopa's tools answer with
 * text, refusals included, so a refusal here is an ordinary result — never isError — whose text is
 * xylocopa's and whose structuredContent is `{status: 'error', error_code, message}` (the audit still
 * records it as an error). A success has `status: 'ok'` and the data the text is rendered from.
 */
export const outcome = {
  status: z.enum(['ok', 'error']),
  error_code: z.string().optional(),
  message: z.string().optional().describe("On error: xylocopa's text"),
};

export type Refused = { status: 'error'; error_code: string; message: string };

/** Runs an action; a DomainError (its message is xylocopa's text) becomes the refusal result. */
export function answer<T>(fn: () => T): T | Refused {
  try {
    return fn();
  } catch (e) {
    if (e instanceof DomainError) return { status: 'error', error_code: e.code, message: e.message };
    throw e;
  }
}

/** A refusal's text, or null for a success. */
export const refusedText = (r: { status: string; message?: string }): string | null =>
  r.status === 'error' ? (r.message ?? '') : null;
