import pino from 'pino';

/**
 * Logs go to stderr as JSON lines: stdout belongs to command output and, under `colony stdio`, to the
 * MCP protocol alone. COLONY_LOG_LEVEL sets the level (default info).
 */
export const log = pino(
  { base: { svc: 'colony' }, level: process.env.COLONY_LOG_LEVEL ?? 'info' },
  pino.destination({ fd: 2, sync: true }),
);
