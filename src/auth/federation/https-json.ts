/**
 * Fetching a provider's JSON documents (discovery, JWKS): HTTPS only, the
 * system CAs plus `sso.ca`, a deadline for the whole exchange, no redirects
 * (a redirect could take the fetch to a host the issuer does not name), and a
 * cap on the body so a hostile or broken provider cannot fill memory.
 *
 * Every connection goes to a public address unless `sso.allowPrivateIssuers`
 * (`public-addresses.ts`: checked when the socket is made, so DNS rebinding
 * cannot turn a checked name into an internal target), and a GET that failed
 * is not tried again for `sso.failureCacheSeconds`: unauthenticated callers
 * cannot turn the gateway into a stream of requests to a tenant's chosen host
 * (issue 42, finding 7).
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
import { LRUCache } from 'lru-cache';
import { Agent, buildConnector, fetch } from 'undici';
import {
  isPublicAddress,
  PrivateAddressError,
  publicOnlyLookup,
  type LookupFunction,
} from './public-addresses.js';

/** Discovery documents and key sets are a few KiB; Entra's JWKS is ~10 KiB. */
const MAX_BODY_BYTES = 512 * 1024;

export interface ProviderHttp {
  /** The body of a 200 answer, parsed; throws on anything else. */
  getJson(url: string, signal?: AbortSignal): Promise<unknown>;
  /**
   * A form POST (the provider's token endpoint) under the same rules: the
   * answer's status and its parsed JSON body (undefined when not JSON).
   */
  postForm(
    url: string,
    form: URLSearchParams,
    authorization: string,
  ): Promise<{ status: number; json: unknown }>;
  /** A fetch for jose's `createRemoteJWKSet` (`customFetch`): the same rules. */
  jwksFetch(url: string, options: { headers: Headers; signal: AbortSignal }): Promise<Response>;
  close(): Promise<void>;
}

export interface ProviderHttpOptions {
  /** `sso.ca`: a PEM file of extra CAs. */
  caFile?: string | undefined;
  timeoutMs: number;
  /** `sso.allowPrivateIssuers`: connect to any address. Default false. */
  allowPrivateAddresses?: boolean | undefined;
  /** `sso.failureCacheSeconds`, in ms: a failed GET of a URL is answered from memory this long. */
  failureCacheMs: number;
  /** How names are resolved (tests); `dns.lookup` by default. */
  lookup?: LookupFunction | undefined;
}

/** Failed URLs remembered at once (least recently failed dropped). */
const MAX_FAILURES = 10_000;

export function createProviderHttp(options: ProviderHttpOptions): ProviderHttp {
  const extra = options.caFile === undefined ? [] : [readFileSync(options.caFile, 'utf8')];
  const dispatcher = new Agent({
    connect: connector(options, [...rootCertificates, ...extra]),
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  const failures = failureCache(options.failureCacheMs);
  const text = async (
    url: string,
    headers: Headers | undefined,
    signal: AbortSignal,
    post?: { form: URLSearchParams; authorization: string },
  ) => {
    if (new URL(url).protocol !== 'https:') throw new Error(`not an https URL: ${url}`);
    const res = await fetch(url, {
      dispatcher,
      redirect: 'manual',
      signal: AbortSignal.any([signal, AbortSignal.timeout(options.timeoutMs)]),
      headers: headers === undefined ? { accept: 'application/json' } : [...headers],
      ...(post === undefined
        ? {}
        : {
            method: 'POST',
            body: post.form.toString(),
            headers: {
              accept: 'application/json',
              'content-type': 'application/x-www-form-urlencoded',
              authorization: post.authorization,
            },
          }),
    }).catch(unwrapped);
    return { status: res.status, body: await cappedBody(res) };
  };
  return {
    getJson: (url, signal = AbortSignal.timeout(options.timeoutMs)) =>
      failures.run(url, async () => {
        const { status, body } = await text(url, undefined, signal);
        if (status !== 200) throw new Error(`${url} answered ${status}`);
        return JSON.parse(body) as unknown;
      }),
    async postForm(url, form, authorization) {
      const signal = AbortSignal.timeout(options.timeoutMs);
      const { status, body } = await text(url, undefined, signal, { form, authorization });
      let json: unknown;
      try {
        json = JSON.parse(body) as unknown;
      } catch {
        json = undefined;
      }
      return { status, json };
    },
    jwksFetch: (url, { headers, signal }) =>
      failures.run(url, async () => {
        const { status, body } = await text(url, headers, signal);
        if (status !== 200) throw new Error(`${url} answered ${status}`);
        return new Response(body, { status, headers: { 'content-type': 'application/json' } });
      }),
    close: () => dispatcher.close(),
  };
}

/**
 * undici's connector with the address rule: a name through
 * {@link publicOnlyLookup}, an IP literal (which `net.connect` does not look
 * up) checked here.
 */
function connector(options: ProviderHttpOptions, ca: string[]): buildConnector.connector {
  const allowAny = options.allowPrivateAddresses === true;
  const base = buildConnector({
    ca,
    timeout: options.timeoutMs,
    ...(allowAny ? {} : { lookup: publicOnlyLookup(options.lookup) }),
  } as buildConnector.BuildOptions);
  return (connect, callback) => {
    const host = connect.hostname;
    if (!allowAny && isIP(host) !== 0 && !isPublicAddress(host))
      return callback(new PrivateAddressError(host), null);
    return base(connect, callback);
  };
}

/** A URL's failure, answered again without a request until it expires. */
function failureCache(ttlMs: number) {
  const failed = new LRUCache<string, Error>({ max: MAX_FAILURES, ttl: Math.max(ttlMs, 1) });
  return {
    async run<T>(url: string, fetchIt: () => Promise<T>): Promise<T> {
      const earlier = failed.get(url);
      if (earlier !== undefined)
        throw new Error(`${url} failed within sso.failureCacheSeconds: ${earlier.message}`, {
          cause: earlier,
        });
      try {
        return await fetchIt();
      } catch (err) {
        if (ttlMs > 0) failed.set(url, err instanceof Error ? err : new Error(String(err)));
        throw err;
      }
    },
  };
}

/** undici's `fetch failed` says nothing: its cause does (a refused address, a refused connection). */
function unwrapped(err: unknown): never {
  const cause = err instanceof TypeError ? err.cause : undefined;
  if (cause instanceof Error) throw new Error(`fetch failed: ${cause.message}`, { cause });
  throw err;
}

async function cappedBody(res: Awaited<ReturnType<typeof fetch>>): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > MAX_BODY_BYTES || res.body === null) {
    await res.body?.cancel();
    if (res.body === null) return '';
    throw new Error(`answer over ${MAX_BODY_BYTES} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    if (size > MAX_BODY_BYTES) throw new Error(`answer over ${MAX_BODY_BYTES} bytes`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks).toString('utf8');
}
