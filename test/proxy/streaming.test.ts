/**
 * DESIGN §2 step 4, "streaming bodies both ways (never buffer a proxied
 * body)": a 100 MB upload and a 20 MB download pass byte-identical, the
 * gateway's memory stays far below the body size, and an upstream that stops
 * reading stops the client from sending (back-pressure crosses the proxy).
 * Bodies are generated deterministically in 64 KiB chunks and hashed on the
 * fly: no test holds a whole body.
 */
import { createCipheriv, createHash } from 'node:crypto';
import { request, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import { fixtureSuite } from '../support/fixture-suite.js';
import { bearer } from '../support/gateway.js';
import { startEchoUpstream, startUpstream, waitFor } from '../support/upstream.js';

const MiB = 1024 * 1024;
const UPLOAD_BYTES = 100 * MiB;
const DOWNLOAD_BYTES = 20 * MiB;
/** The route timeout of /trickle: shorter than its upload, longer than any pause in it. */
const TRICKLE_TIMEOUT_MS = 400;

// Chunks already passed along are garbage until V8 collects them: measuring
// what is retained needs a collection first (jest-leak-detector does the same).
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** Resumes the reluctant upstream's reading. */
let resumeReluctant: (() => void) | undefined;

const s = fixtureSuite(
  {
    echo: startEchoUpstream,
    downloads: () =>
      startUpstream((req, res) => {
        req.on('end', () => {
          res.setHeader('Content-Type', 'application/vnd.thing+json; charset=utf-8');
          res.setHeader('X-Upstream-Thing', 'thing/1; q="quoted, with comma"');
          res.setHeader('Set-Cookie', [
            'a=1; Path=/; HttpOnly',
            'b=2; Path=/orders; Secure; SameSite=Strict',
          ]);
          if (req.url?.endsWith('/big')) {
            res.setHeader('Content-Type', 'application/octet-stream');
            generated(DOWNLOAD_BYTES).stream.pipe(res);
          } else {
            res.end('{"ok":true}');
          }
        });
      }),
    reluctant: () =>
      // Reads the first MiB, then stops reading until the test resumes it.
      startUpstream((req, res, record) => {
        req.on('data', () => {
          if (record.bodyLength >= MiB && resumeReluctant === undefined) {
            req.pause();
            resumeReluctant = () => req.resume();
          }
        });
        req.on('end', () =>
          res.writeHead(200, { 'content-type': 'text/plain' }).end('read it all'),
        );
      }),
  },
  ({ echo, downloads, reluctant }) => ({
    routes: [
      { prefix: '/upload', upstream: echo.url },
      { prefix: '/files', upstream: downloads.url },
      { prefix: '/reluctant', upstream: reluctant.url },
      { prefix: '/trickle', upstream: echo.url, timeoutMs: TRICKLE_TIMEOUT_MS },
    ],
  }),
  { token: true },
);
let url: string;
let auth: string;
beforeAll(() => {
  url = s.gw.url;
  auth = bearer(s.token);
});

describe('a 100 MB upload', () => {
  it('arrives byte-identical, and the gateway does not hold it in memory', async () => {
    const body = generated(UPLOAD_BYTES);
    const before = s.up.echo.requests.length;
    const baseline = retainedMemory();
    let peak = baseline;
    // Each sample is two full collections, and their cost grows with the
    // worker's heap (its files share one module graph): the next sample waits
    // 150 ms or twice as long as this one took, so collecting never takes
    // more than a third of the upload's time.
    let sampler: NodeJS.Timeout | undefined;
    const sample = () => {
      const started = performance.now();
      const now = retainedMemory();
      peak = { heap: Math.max(peak.heap, now.heap), buffers: Math.max(peak.buffers, now.buffers) };
      sampler = setTimeout(sample, Math.max(150, 2 * (performance.now() - started)));
    };
    sampler = setTimeout(sample, 150);
    try {
      const { res, text } = await upload('/upload/blob', body.stream, UPLOAD_BYTES);
      expect(res.statusCode).toBe(200);
      const seen = JSON.parse(text) as {
        bodyLength: number;
        bodySha256: string;
        headers: Record<string, string>;
      };
      expect(seen.bodyLength).toBe(104_857_600);
      expect(seen.bodySha256).toBe(body.digest());
      expect(seen.headers['content-length']).toBe(String(UPLOAD_BYTES));
    } finally {
      clearTimeout(sampler);
    }
    expect(s.up.echo.requests.length).toBe(before + 1);
    expect(body.produced()).toBe(UPLOAD_BYTES);
    // Client, gateway and upstream share this process: the growth bounds them
    // all. Body bytes live in array buffers, outside the V8 heap.
    expect(peak.heap - baseline.heap).toBeLessThan(50 * MiB);
    expect(peak.buffers - baseline.buffers).toBeLessThan(50 * MiB);
  });

  it('that takes longer than the route timeout but never pauses that long is not cut', async () => {
    const chunks = 8;
    const chunk = Buffer.alloc(64 * 1024, 7);
    const slowly = Readable.from(
      (async function* () {
        for (let i = 0; i < chunks; i++) {
          await new Promise((resolve) => setTimeout(resolve, TRICKLE_TIMEOUT_MS / 3));
          yield chunk;
        }
      })(),
    );
    const started = Date.now();
    const { res, text } = await upload('/trickle/blob', slowly, chunks * chunk.length);
    expect(Date.now() - started).toBeGreaterThan(2 * TRICKLE_TIMEOUT_MS);
    expect(res.statusCode).toBe(200);
    expect((JSON.parse(text) as { bodyLength: number }).bodyLength).toBe(chunks * chunk.length);
  });

  it('is held back when the upstream stops reading, and completes when it reads again', async () => {
    const body = generated(UPLOAD_BYTES);
    const answer = upload('/reluctant/blob', body.stream, UPLOAD_BYTES);
    answer.catch(() => {}); // awaited below; not an unhandled rejection if an assertion fails first
    await waitFor(() => resumeReluctant !== undefined, 10_000);
    // The client stops being able to send once the buffers along the way are full.
    let last = -1;
    let stableSince = Date.now();
    await waitFor(() => {
      if (body.produced() !== last) {
        last = body.produced();
        stableSince = Date.now();
      }
      return Date.now() - stableSince >= 500;
    }, 10_000);
    expect(body.produced()).toBeLessThan(UPLOAD_BYTES / 2);
    resumeReluctant?.();
    const { res, text } = await answer;
    expect(res.statusCode).toBe(200);
    expect(text).toBe('read it all');
    const seen = s.up.reluctant.requests.at(-1)!;
    expect(seen.bodyLength).toBe(UPLOAD_BYTES);
    expect(seen.bodySha256).toBe(body.digest());
  });
});

describe('a response', () => {
  it('of 20 MB arrives byte-identical', async () => {
    const res = await fetch(`${url}/files/big`, { headers: { authorization: auth } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    const hash = createHash('sha256');
    let received = 0;
    for await (const chunk of res.body!) {
      received += chunk.length;
      hash.update(chunk);
    }
    const expected = generated(DOWNLOAD_BYTES);
    for await (const _ of expected.stream);
    expect(received).toBe(DOWNLOAD_BYTES);
    expect(hash.digest('hex')).toBe(expected.digest());
  });

  it("keeps the upstream's headers untouched: custom, Set-Cookie twice, Content-Type", async () => {
    const res = await fetch(`${url}/files/small`, { headers: { authorization: auth } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/vnd.thing+json; charset=utf-8');
    expect(res.headers.get('x-upstream-thing')).toBe('thing/1; q="quoted, with comma"');
    expect(res.headers.getSetCookie()).toEqual([
      'a=1; Path=/; HttpOnly',
      'b=2; Path=/orders; Secure; SameSite=Strict',
    ]);
    expect(await res.json()).toEqual({ ok: true });
  });
});

/**
 * `total` pseudo-random bytes (AES-256-CTR over zeros, fixed key: the same
 * bytes on every run), made on demand in 64 KiB chunks and hashed as made.
 */
function generated(total: number): { stream: Readable; produced(): number; digest(): string } {
  const cipher = createCipheriv('aes-256-ctr', Buffer.alloc(32, 7), Buffer.alloc(16, 0));
  const zeros = Buffer.alloc(64 * 1024);
  const hash = createHash('sha256');
  let produced = 0;
  const stream = new Readable({
    read() {
      if (produced >= total) {
        this.push(null);
        return;
      }
      const chunk = cipher.update(zeros.subarray(0, Math.min(zeros.length, total - produced)));
      produced += chunk.length;
      hash.update(chunk);
      this.push(chunk);
    },
  });
  return { stream, produced: () => produced, digest: () => hash.copy().digest('hex') };
}

/** POSTs `body` with a Content-Length through the gateway; resolves with the answer. */
function upload(
  path: string,
  body: Readable,
  length: number,
): Promise<{ res: IncomingMessage; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      {
        method: 'POST',
        headers: {
          authorization: auth,
          'content-type': 'application/octet-stream',
          'content-length': length,
        },
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ res, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    body.pipe(req);
  });
}

/** Heap and array-buffer bytes still reachable (collected first). */
function retainedMemory(): { heap: number; buffers: number } {
  // Twice: V8 frees dead array buffers' memory on a concurrent sweeper after
  // a collection, and the next collection first waits for that sweep. With
  // one, a busy machine read up to 64 MB of already-dead upload chunks as
  // retained (Node 24; 0.1–0.2 MB with two, 88 MB when the gateway really
  // keeps the body).
  collectGarbage();
  collectGarbage();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return { heap: heapUsed, buffers: arrayBuffers };
}
