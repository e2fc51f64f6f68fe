/**
 * A gRPC call's request bytes, kept while the upstream may still refuse the
 * call unprocessed, so that it can be sent again on another session.
 *
 * An upstream refuses a stream it never processed with RST_STREAM
 * REFUSED_STREAM — a stream above its GOAWAY's last stream id (the race of
 * a request sent as the upstream closes its connection: grpc-js's
 * `max_connection_age`, a restart), or one over its
 * `SETTINGS_MAX_CONCURRENT_STREAMS` sent before those SETTINGS arrived.
 * RFC 9113 §8.7: such a request is safe to retry; gRPC's transparent retry
 * (gRFC A6) does the same. The bytes are kept until the upstream's response
 * head arrives, up to {@link REPLAY_LIMIT}: a call that sent more before any
 * answer is not retried.
 */
import type { IncomingMessage } from 'node:http';

/** The request bytes kept for a retry: a few unary calls' worth. */
export const REPLAY_LIMIT = 1 << 20;

export class SentBody {
  chunks: Buffer[] = [];
  #bytes = 0;
  #replayable = true;
  readonly #record = (chunk: Buffer) => {
    if (!this.#replayable) return;
    this.#bytes += chunk.length;
    if (this.#bytes > REPLAY_LIMIT) this.stop();
    else this.chunks.push(chunk);
  };

  constructor(private readonly req: IncomingMessage) {
    req.on('data', this.#record);
  }

  /** Whether every byte sent so far is kept. */
  get replayable(): boolean {
    return this.#replayable;
  }

  /** No retry any more (the upstream answered, or too much was sent): the bytes are let go. */
  stop(): void {
    this.#replayable = false;
    this.chunks = [];
    this.req.off('data', this.#record);
  }
}
