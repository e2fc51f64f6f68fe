/**
 * The part of autocannon 9's programmatic API the benchmark uses (the package
 * ships no types). Callback form only: the returned tracker then emits
 * `response` for every answer, with its latency in fractional milliseconds.
 */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Options {
      url: string;
      connections?: number;
      pipelining?: number;
      /** Seconds; ignored when `amount` is set. */
      duration?: number;
      /** Total requests to complete before stopping. */
      amount?: number;
      /** Seconds to wait for an answer before counting a timeout. */
      timeout?: number;
      headers?: Record<string, string>;
      /** GET when not given. */
      method?: string;
      /** The body of every request. */
      body?: string;
      title?: string;
    }

    /** Summary of an HDR histogram, as autocannon reports it. */
    interface Stats {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p99: number;
    }

    interface Result {
      title?: string;
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      resets: number;
      '2xx': number;
      statusCodeStats: Record<string, { count: number }>;
      latency: Stats;
      requests: Stats & { sent: number };
    }

    interface Instance extends EventEmitter {
      on(
        event: 'response',
        listener: (
          client: unknown,
          statusCode: number,
          resBytes: number,
          responseTime: number,
        ) => void,
      ): this;
      stop(): void;
    }
  }

  function autocannon(
    options: autocannon.Options,
    done: (err: Error | null, result: autocannon.Result) => void,
  ): autocannon.Instance;

  export = autocannon;
}
