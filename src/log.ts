import pino from 'pino';
import { prettyLine } from './log-format.js';

/**
 * Logs go to stderr: stdout belongs to command output and, under `colony stdio`, to the MCP protocol
 * alone. JSON lines by default (for collectors and pipes); on a terminal, one readable line per entry
 * (log-format.ts). COLONY_LOG_LEVEL sets the level (default info).
 *
 * Writes are synchronous (sonic-boom in sync mode; a TTY's stream is synchronous on Linux and macOS), so
 * the last lines before an exit are not lost. Once a server is serving (`gatherPerTurn`, from `colony
 * serve` and `colony stdio` after their start), lines below warn are gathered for the rest of the current
 * turn of the event loop and written together (setImmediate, on exit, or at 64 KiB): a busy server logs
 * one line per write call, and a write() each cost more than the rest of its logging. A warning or an
 * error is written at once, after whatever was gathered before it, so a crash that follows it cannot take
 * it along; what a signal that ends the process without an exit event cuts short is an info line of the
 * turn it came in. Start-up (rebuilds, checks: long synchronous work) writes each line as it comes.
 */
const write: (text: string) => void = process.stderr.isTTY
  ? (text) => void process.stderr.write(text)
  : (
      (boom) => (text: string) =>
        void boom.write(text)
    )(pino.destination({ fd: 2, sync: true }));
const format = process.stderr.isTTY ? prettyLine : (line: string) => line;

let gathering = false;
let gathered: string[] = [];
let gatheredBytes = 0;
let scheduled = false;
let exitHook = false;
const MAX_GATHERED = 64 << 10;

/** From now on, lines below warn are written once per turn of the event loop (see above). */
export function gatherPerTurn(): void {
  gathering = true;
}

function writeGathered(): void {
  scheduled = false;
  if (gathered.length === 0) return;
  const text = gathered.join('');
  gathered = [];
  gatheredBytes = 0;
  write(text);
}

const WARN = 40;
const destination = {
  /** pino sets `lastLevel` before each write when the stream asks for it. */
  [Symbol.for('pino.metadata')]: true,
  lastLevel: 0,
  write(line: string): void {
    const text = format(line);
    gathered.push(text);
    gatheredBytes += text.length;
    if (!gathering || this.lastLevel >= WARN || gatheredBytes >= MAX_GATHERED) return writeGathered();
    if (!exitHook) {
      exitHook = true;
      process.on('exit', writeGathered);
    }
    if (scheduled) return;
    scheduled = true;
    setImmediate(writeGathered).unref();
  },
};

export const log = pino({ base: { svc: 'colony' }, level: process.env.COLONY_LOG_LEVEL ?? 'info' }, destination);
