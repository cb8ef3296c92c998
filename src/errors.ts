/**
 * Errors with a stable code. Domain code throws these; a throw inside a command's transaction rolls the
 * whole command back. `mcp/results.ts` turns them into MCP tool results, `http/api-common.ts` into JSON
 * with an HTTP status, and the CLI prints `<Code>: <message>`.
 * Codes follow SynapBus's style: `Err` + PascalCase, never renamed once published.
 */
export class DomainError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export type ExpectedVersion = number | 'no_stream' | 'any';

/** A stale expected version: someone else appended to the stream first. Retry after re-reading. */
export class ConcurrencyError extends DomainError {
  constructor(streamId: string, expected: ExpectedVersion, actual: number) {
    super('ErrConcurrency', `stream ${streamId} is at version ${actual}, expected ${String(expected)}`, {
      streamId,
      expected,
      actual,
    });
    this.name = 'ConcurrencyError';
  }
}

export const invalidInput = (message: string, details?: Record<string, unknown>): DomainError =>
  new DomainError('ErrInvalidInput', message, details);

export const notFound = (what: string, details?: Record<string, unknown>): DomainError =>
  new DomainError('ErrNotFound', `${what} not found`, details);

export const isDomainError = (e: unknown): e is DomainError => e instanceof DomainError;
