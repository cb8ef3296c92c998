import { invalidInput } from '../../errors.js';

/**
 * Where a PostgreSQL store is. Apart from connect.ts so that resolving a store URL — which every command
 * does — does not load node-postgres (~0.1 s of a CLI command's start), only connecting does.
 *
 * A store URL is a libpq URL (`postgres://user@host:port/db`) with one
 * addition, `?schema=<name>` (default `colony`): the schema that holds Colony's tables, so several
 * Colonies — or test runs — can share a database. Every connection sets its search_path to it.
 */
export interface PgTarget {
  /** The URL without Colony's own parameters, as node-postgres takes it. */
  connectionString: string;
  schema: string;
  /** The URL with any password hidden, for messages. */
  display: string;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function pgTarget(url: string): PgTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidInput(`store URL is not a URL: ${JSON.stringify(url)} (expected postgres://user@host:port/database)`);
  }
  if (!/^postgres(ql)?:$/.test(parsed.protocol))
    throw invalidInput(`store URL must start with postgres:// (got ${parsed.protocol}//)`);
  const schema = parsed.searchParams.get('schema') ?? 'colony';
  if (!SCHEMA_NAME.test(schema))
    throw invalidInput(`schema ${JSON.stringify(schema)} is not a plain lowercase SQL name (a-z, 0-9, _)`);
  const display = new URL(parsed.href);
  if (display.password) display.password = '***';
  parsed.searchParams.delete('schema');
  // The tenant a node's domain commands work on (cli/shared.ts) is Colony's too, not libpq's.
  parsed.searchParams.delete('tenant');
  return { connectionString: parsed.href, schema, display: display.href };
}
