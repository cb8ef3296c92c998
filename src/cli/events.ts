import type { Command } from 'commander';
import { parsePositiveInt } from '../config.js';
import type { Database } from '../engine/db.js';
import type { StoredEvent } from '../engine/event.js';
import type { readAll } from '../engine/store.js';
import { action, globals, openLogReader } from './shared.js';

/**
 * `colony events tail`: the last events of the log, or with --follow every new one as it is committed
 * (by any process: it polls the log, so it sees the server's appends too).
 */
export function registerEvents(program: Command): void {
  const events = program.command('events').description('read the event log');
  events
    .command('tail')
    .description('print the last events of the log; --follow keeps printing new ones')
    .option('-n, --limit <n>', 'how many of the last events to print first', '20')
    .option('--after <position>', 'print events after this position instead of the last N')
    .option('-f, --follow', 'keep printing events as they are appended (Ctrl-C to stop)')
    .option('--json', 'one JSON object per event and line (NDJSON)')
    .option('--interval <ms>', 'poll interval for --follow', '250')
    .action(
      action(
        async (
          opts: { limit: string; after?: string; follow?: boolean; json?: boolean; interval: string },
          cmd: Command,
        ) => {
          const { readAll, readHead } = await import('../engine/store.js');
          const log = await openLogReader(globals(cmd));
          const { db } = log;
          const limit = parsePositiveInt('--limit', opts.limit, 20);
          const interval = Math.max(10, parsePositiveInt('--interval', opts.interval, 250));
          const print = (e: StoredEvent) => process.stdout.write(`${opts.json ? JSON.stringify(e) : formatLine(e)}\n`);
          // With --follow, Ctrl-C ends the tail cleanly from its start: a signal that came while the backlog
          // printed, before a listener was there, ended the process by the signal (exit 130, no clean close).
          // The backlog prints synchronously, so a listener runs only once the follow loop's stop is in place.
          let stop = (): void => undefined;
          if (opts.follow) {
            const onSignal = () => stop();
            process.once('SIGINT', onSignal);
            process.once('SIGTERM', onSignal);
            process.stdout.once('error', onSignal); // a closed pipe (`| head`) ends the tail quietly
          }
          let after =
            opts.after !== undefined
              ? parsePositiveInt('--after', opts.after, 0)
              : Math.max(0, readHead(db).position - limit);
          after = drain(db, readAll, after, print);
          if (!opts.follow) return void log.close();
          await new Promise<void>((resolve) => {
            const timer = setInterval(() => {
              log.refresh();
              after = drain(db, readAll, after, print);
            }, interval);
            stop = () => {
              clearInterval(timer);
              log.close();
              resolve();
            };
          });
        },
      ),
    );
}

function drain(db: Database, read: typeof readAll, after: number, print: (e: StoredEvent) => void): number {
  let position = after;
  for (
    let page = read(db, { after: position, limit: 1000 });
    page.length > 0;
    page = read(db, { after: position, limit: 1000 })
  ) {
    for (const e of page) print(e);
    position = page[page.length - 1]!.position;
  }
  return position;
}

function formatLine(e: StoredEvent): string {
  const data = JSON.stringify(e.data);
  return `${String(e.position).padStart(8)}  ${e.recordedAt}  ${e.streamId}@${e.version}  ${e.type}  ${data.length > 120 ? `${data.slice(0, 117)}...` : data}`;
}
