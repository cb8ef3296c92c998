import pino from 'pino';
import { prettyLine } from './log-format.js';

/**
 * Logs go to stderr: stdout belongs to command output and, under `colony stdio`, to the MCP protocol
 * alone. JSON lines by default (for collectors and pipes); on a terminal, one readable line per entry
 * (log-format.ts). COLONY_LOG_LEVEL sets the level (default info). Both forms write synchronously (a
 * TTY's stream is synchronous on Linux and macOS), so the last lines before an exit are not lost.
 */
const destination = process.stderr.isTTY
  ? { write: (line: string) => void process.stderr.write(prettyLine(line)) }
  : pino.destination({ fd: 2, sync: true });

export const log = pino({ base: { svc: 'colony' }, level: process.env.COLONY_LOG_LEVEL ?? 'info' }, destination);
