import { closeSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { basename } from 'node:path';
import { log } from '../log.js';

/**
 * Descriptors Colony inherited open without close-on-exec (from a shell, a supervisor, a test harness)
 * would pass on to every process it starts — into every sandbox. Colony's own descriptors are all
 * close-on-exec (libuv and SQLite open them so); any other one above stdio is closed once, before the
 * first confined process starts. Node's IPC channel, when there is one, is kept.
 */
const O_CLOEXEC = 0o2000000;

export function closeInheritedDescriptors(): number[] {
  if (process.platform !== 'linux') return [];
  const keep = new Set([0, 1, 2, Number(process.env.NODE_CHANNEL_FD ?? -1)]);
  const isV8Output = v8OutputTest();
  const closed: number[] = [];
  const kept: string[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc/self/fdinfo');
  } catch {
    return [];
  }
  for (const name of names) {
    const fd = Number(name);
    if (keep.has(fd)) continue;
    let flags: number;
    try {
      flags = parseInt(/^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1] ?? '', 8);
    } catch {
      continue; // closed meanwhile (the listing's own descriptor)
    }
    if (Number.isNaN(flags) || (flags & O_CLOEXEC) !== 0) continue;
    const v8File = isV8Output?.(fd);
    if (v8File) {
      kept.push(v8File);
      continue;
    }
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      /* gone already */
    }
  }
  if (closed.length)
    log.info({ fds: closed }, 'closed descriptors inherited without close-on-exec: no process Colony starts gets them');
  // Node has no fcntl to make them close-on-exec: every process Colony starts, confined ones too, inherits them.
  if (kept.length)
    log.warn(
      { files: kept },
      "V8's profiling output is open without close-on-exec and kept open for V8: every process Colony starts, agents' included, inherits it writable; profile with no agents running",
    );
  return closed;
}

/**
 * V8 opens the files its profiling flags write to (--perf-basic-prof, --perf-prof, --prof, --logfile) without
 * close-on-exec, and keeps writing to them: closed, its next line would go to whatever file or socket got
 * the number next (a database, an HTTP response). Without such a flag: null. With one: the file a
 * descriptor is open on when it is one V8 names after this process or the --logfile given (per isolate:
 * `isolate-<address>-<pid>-<name>`), else null.
 */
const V8_LOG_FLAG = /^--(prof|perf-basic-prof|perf-prof|log|logfile)(?:$|[-=])/;

function v8OutputTest(): ((fd: number) => string | null) | null {
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (!flags.some((f) => V8_LOG_FLAG.test(f))) return null;
  const logfile = flags.findLast((f) => f.startsWith('--logfile='))?.slice('--logfile='.length);
  const pid = process.pid;
  const names = (name: string) =>
    name === `perf-${pid}.map` ||
    name === `jit-${pid}.dump` ||
    name.endsWith(`-${pid}-v8.log`) ||
    name === 'v8.log' ||
    (logfile !== undefined && (name === basename(logfile) || name.endsWith(`-${pid}-${basename(logfile)}`)));
  return (fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return names(basename(target)) ? target : null;
    } catch {
      return null;
    }
  };
}
