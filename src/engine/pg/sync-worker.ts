import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { DomainError } from '../../errors.js';

/**
 * Synchronous calls into a worker thread that does asynchronous work (a PostgreSQL client): the caller
 * posts a request and blocks on an Atomics.wait until the worker has posted the answer and flipped a
 * shared flag, then takes the answer off the port with receiveMessageOnPort. This is what lets a
 * replica's synchronous SQLite transaction (engine/replica.ts) take a lock on PostgreSQL and commit
 * there before its own COMMIT: the domain code stays synchronous, and nothing else runs in between.
 *
 * A call that gets no answer in time ends the worker (its connection, and so any transaction it held,
 * dies with it, which PostgreSQL rolls back); the next call starts a new one.
 */
export interface SyncRequest {
  id: number;
  op: string;
  args: unknown;
}

export type SyncReply = { id: number; value: unknown } | { id: number; error: WireError };

export interface WireError {
  message: string;
  code?: string;
  details?: Record<string, unknown>;
}

export class SyncWorker {
  private worker: Worker | null = null;
  private port: MessagePort | null = null;
  private flag: Int32Array | null = null;
  private next = 0;

  constructor(
    private readonly entry: URL,
    /** The first call every new worker gets (opening its connections). */
    private readonly init: { op: string; args: unknown },
    private readonly timeoutMs = 30_000,
    /** The first call may build the tenant's read models on the store (a new projection): minutes, not seconds. */
    private readonly initTimeoutMs = 15 * 60_000,
  ) {}

  call<T>(op: string, args: unknown = null): T {
    if (!this.worker) this.start();
    return this.send<T>(op, args);
  }

  close(): Promise<number> | undefined {
    const worker = this.worker;
    this.worker = null;
    this.port?.close();
    return worker?.terminate();
  }

  private start(): void {
    const channel = new MessageChannel();
    this.flag = new Int32Array(new SharedArrayBuffer(4));
    this.worker = new Worker(this.entry, {
      workerData: { port: channel.port2, flag: this.flag.buffer },
      transferList: [channel.port2],
    });
    const worker = this.worker;
    worker.unref();
    // Only the worker that failed is ended: by the time its error arrives a new one may be serving.
    worker.on('error', () => {
      if (this.worker === worker) void this.close();
    });
    this.port = channel.port1;
    try {
      this.send(this.init.op, this.init.args, this.initTimeoutMs);
    } catch (e) {
      void this.close();
      throw e;
    }
  }

  private send<T>(op: string, args: unknown, timeoutMs = this.timeoutMs): T {
    const flag = this.flag!;
    const id = ++this.next;
    Atomics.store(flag, 0, 0);
    this.port!.postMessage({ id, op, args } satisfies SyncRequest);
    // A wake-up is not an answer: the worker's notify for the previous call (its store and notify are two
    // steps) can arrive after this call cleared the flag. Only the flag set says the answer is on the port.
    for (const deadline = Date.now() + timeoutMs; Atomics.load(flag, 0) === 0;) {
      const left = deadline - Date.now();
      if (left <= 0 || Atomics.wait(flag, 0, 0, left) === 'timed-out') {
        void this.close();
        throw new DomainError('ErrStoreUnavailable', `the store did not answer ${op} within ${timeoutMs / 1000} s`);
      }
    }
    const reply = receiveMessageOnPort(this.port!)?.message as SyncReply | undefined;
    if (!reply || reply.id !== id) {
      void this.close();
      throw new DomainError('ErrStoreUnavailable', `the store worker answered out of turn (${op})`);
    }
    if ('error' in reply) throw revive(reply.error);
    return reply.value as T;
  }
}

function revive(e: WireError): Error {
  return e.code ? new DomainError(e.code, e.message, e.details ?? {}) : new Error(e.message);
}
