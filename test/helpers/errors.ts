import assert from 'node:assert/strict';
import { isDomainError } from '../../src/errors.js';

/** Asserts that `fn` throws a DomainError with `code` (and, when given, a message matching `pattern`). */
export function throwsCode(fn: () => unknown, code: string, pattern?: RegExp): void {
  assert.throws(
    fn,
    (e: unknown) => isDomainError(e) && e.code === code && (!pattern || pattern.test(e.message)),
    `expected ${code}${pattern ? ` matching ${pattern}` : ''}`,
  );
}
