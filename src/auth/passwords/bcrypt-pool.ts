/**
 * bcrypt's worker threads (piscina) behind a FIFO queue (p-queue).
 *
 * Work waits in the queue in front of the pool, which is handed no more
 * tasks than it has threads. Piscina's own queue reorders tasks that carry
 * an AbortSignal: under a steady stream of logins on one thread some waited
 * 10 s and more while later ones were served (measured with the bench's login
 * storm; its `stricterFIFO` option made the order LIFO).
 */
import { performance } from 'node:perf_hooks';
import PQueue from 'p-queue';
import { Piscina } from 'piscina';

export interface BcryptPoolHooks {
  /** Told how long each job waited for a thread (metrics). */
  onWait?: ((seconds: number) => void) | undefined;
  /** Told of an error the pool raised outside any job (never thrown). */
  onPoolError?: ((err: Error) => void) | undefined;
}

export class BcryptPool {
  private readonly threads: number;
  private readonly hooks: BcryptPoolHooks;
  private readonly queue: PQueue;
  /** Started by the first job. */
  private pool: Piscina | undefined = undefined;

  constructor(threads: number, hooks: BcryptPoolHooks) {
    this.threads = threads;
    this.hooks = hooks;
    this.queue = new PQueue({ concurrency: threads });
  }

  /**
   * Runs `task` on a thread once one is free, telling `onWait` how long that
   * took. `signal` drops it from the queue; `runOptions.signal` ends it
   * while it runs.
   */
  run<T>(
    task: object,
    runOptions: { name: string; signal?: AbortSignal | null },
    signal?: AbortSignal,
  ): Promise<T> {
    const added = performance.now();
    return this.queue.add(
      () => {
        this.hooks.onWait?.((performance.now() - added) / 1000);
        return this.started().run(task, runOptions) as Promise<T>;
      },
      signal === undefined ? {} : { signal },
    );
  }

  /** Jobs queued or running. */
  depth(): number {
    return this.queue.size + this.queue.pending;
  }

  /** close(), not destroy(): a login still hashing finishes instead of failing. */
  async close(): Promise<void> {
    await this.pool?.close();
  }

  private started(): Piscina {
    if (this.pool !== undefined) return this.pool;
    this.pool = new Piscina({
      filename: new URL('./bcrypt-worker.js', import.meta.url).href,
      minThreads: 1,
      maxThreads: this.threads,
      idleTimeout: 60_000,
    });
    this.pool.on('error', (err: Error) => this.hooks.onPoolError?.(err));
    return this.pool;
  }
}
