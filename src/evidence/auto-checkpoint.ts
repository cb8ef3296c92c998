import { Worker } from 'node:worker_threads';
import { databaseFile } from '../config.js';
import type { Durability } from '../engine/db.js';
import type { Engine } from '../engine/engine.js';
import { readHead } from '../engine/store.js';
import { log } from '../log.js';
import { latestCheckpoint } from './checkpoint.js';
import type { SignerData, SignReply, SignRequest } from './checkpoint-worker.js';
import { keepPrepared } from './copy-checkpoint.js';
import { currentSigner } from './keys.js';
import { signCheckpoint } from './sign.js';

/**
 * `serve` signs checkpoints by itself: when the log has grown by `everyEvents` since the latest one, or
 * when `everyMinutes` have passed since it and the log has grown at all. It looks every few seconds (two
 * one-row reads), so appends by other processes on the same data dir count too. The signing runs on a
 * worker thread with its own connection (checkpoint-worker.ts): at a million events and a hundred
 * thousand streams a checkpoint is seconds of work, which must not stall the commands. One at a time;
 * an error is logged and retried at the next look, never fatal. 0 turns a trigger off.
 */
export interface AutoCheckpointOptions {
  everyEvents: number;
  everyMinutes: number;
  durability?: Durability;
  /** How often to look (tests shorten it). */
  intervalMs?: number;
}

export interface AutoCheckpoints {
  stop(): Promise<void>;
  due(): boolean;
  /** Looks now; resolves when the signing it started (if any) is done. */
  look(): Promise<void>;
}

export function startAutoCheckpoints(engine: Engine, dataDir: string, o: AutoCheckpointOptions): AutoCheckpoints {
  const due = (): boolean => {
    const size = readHead(engine.db).position;
    const latest = latestCheckpoint(engine.db)?.checkpoint.body;
    if (size === 0 || (latest && latest.treeSize >= size)) return false;
    if (!latest) return true;
    const grown = size - latest.treeSize;
    const ageMs = engine.clock().getTime() - Date.parse(latest.time);
    return (o.everyEvents > 0 && grown >= o.everyEvents) || (o.everyMinutes > 0 && ageMs >= o.everyMinutes * 60_000);
  };
  if (o.everyEvents === 0 && o.everyMinutes === 0) return { stop: async () => {}, due, look: async () => {} };
  currentSigner(engine, dataDir, 'serve'); // adopted here, on the main thread: the worker only signs
  const signer = signerFor(engine, dataDir, o.durability ?? 'full');
  let running: Promise<void> | null = null;
  const look = (): Promise<void> => {
    if (running || !engine.db.open) return running ?? Promise.resolve();
    try {
      if (!due()) return Promise.resolve();
    } catch (e) {
      log.error({ err: e }, 'could not look for a due checkpoint');
      return Promise.resolve();
    }
    running = signer.sign({ time: engine.clock().toISOString() }).finally(() => {
      running = null;
    });
    return running;
  };
  const timer = setInterval(() => void look(), o.intervalMs ?? 5000);
  timer.unref();
  return {
    due,
    look,
    stop: async () => {
      clearInterval(timer);
      await running;
      await signer.close();
    },
  };
}

/**
 * A node's copy of a PostgreSQL tenant is a file (engine/pg/copy-file.ts): a worker reads it and prepares
 * the checkpoint, the node keeps it. A copy in memory (an engine opened on ':memory:') is out of a
 * worker's reach: it signs here.
 */
function signerFor(engine: Engine, dataDir: string, durability: Durability): SignerHere | SignerThread {
  if (!engine.replica) return new SignerThread({ file: databaseFile(dataDir), dataDir, durability, keep: true });
  if (engine.db.memory) return new SignerHere(engine, dataDir);
  return new SignerThread({ file: engine.db.name, dataDir, durability: 'normal', keep: false }, engine);
}

/** On the main thread (a copy of a PostgreSQL tenant in memory), logged as the worker's replies are. */
class SignerHere {
  constructor(
    private readonly engine: Engine,
    private readonly dataDir: string,
  ) {}

  sign(): Promise<void> {
    try {
      const { checkpoint, reused } = signCheckpoint(this.engine, this.dataDir, 'auto', 'serve');
      const b = checkpoint.checkpoint.body;
      if (!reused)
        log.info(
          { checkpoint: checkpoint.n, treeSize: b.treeSize, root: b.rootHash, keyId: b.keyId },
          `signed checkpoint #${checkpoint.n} at ${b.treeSize} events`,
        );
    } catch (err) {
      log.error({ err }, 'could not sign a checkpoint; retrying');
    }
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** What a signing came to: the checkpoint stored (null: nothing new), or why it failed. */
type Outcome =
  | { ok: true; stored: { n: number; treeSize: number; rootHash: string; keyId: string } | null }
  | { ok: false; message: string };

/**
 * The worker, started on first use and kept; its replies are logged. On a node's copy of a PostgreSQL
 * tenant (`copy`) the worker reads the copy's file and only prepares the checkpoint, which is kept here,
 * in the store too (copy-checkpoint.ts).
 */
class SignerThread {
  private worker: Worker | null = null;
  private failing = false;

  constructor(
    private readonly data: SignerData,
    private readonly copy: Engine | null = null,
  ) {}

  sign(request: SignRequest): Promise<void> {
    try {
      // What other nodes committed and signed is in the copy's file before the worker reads it.
      this.copy?.catchUp();
    } catch (e) {
      this.report({ ok: false, message: (e as Error).message });
      return Promise.resolve();
    }
    const worker = (this.worker ??= this.start());
    return new Promise((resolve) => {
      const done = (reply: SignReply) => {
        worker.off('message', done);
        worker.off('exit', gone);
        this.report(this.outcome(reply));
        resolve();
      };
      const gone = () => done({ ok: false, message: 'the checkpoint worker stopped' });
      worker.on('message', done);
      worker.on('exit', gone);
      worker.postMessage(request);
    });
  }

  private outcome(reply: SignReply): Outcome {
    if (!reply.ok) return reply;
    if (!('prepared' in reply)) return { ok: true, stored: reply.reused ? null : reply };
    try {
      const kept = reply.prepared && this.copy ? keepPrepared(this.copy, reply.prepared) : null;
      return { ok: true, stored: kept && { n: kept.n, ...kept.checkpoint.body } };
    } catch (e) {
      return { ok: false, message: (e as Error).message };
    }
  }

  private report(outcome: Outcome): void {
    if (outcome.ok) {
      const c = outcome.stored;
      if (c)
        log.info(
          { checkpoint: c.n, treeSize: c.treeSize, root: c.rootHash, keyId: c.keyId },
          `signed checkpoint #${c.n} at ${c.treeSize} events`,
        );
      this.failing = false;
      return;
    }
    if (!this.failing) log.error({ reason: outcome.message }, 'could not sign a checkpoint; retrying');
    this.failing = true;
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
  }

  private start(): Worker {
    // Colony runs its TypeScript through tsx, which a worker thread does not inherit: the boot file registers it.
    const worker = new Worker(new URL('./checkpoint-worker.boot.mjs', import.meta.url), { workerData: this.data });
    worker.unref();
    worker.on('error', (err) =>
      log.error({ err }, 'the checkpoint worker failed; a new one starts at the next checkpoint'),
    );
    worker.on('exit', () => {
      if (this.worker === worker) this.worker = null;
    });
    return worker;
  }
}
