/**
 * Fetching a provider's JSON documents (discovery, JWKS): HTTPS only, the
 * system CAs plus `sso.ca`, a deadline for the whole exchange, no redirects
 * (a redirect could take the fetch to a host the issuer does not name), and a
 * cap on the body so a hostile or broken provider cannot fill memory.
 */
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { Agent, fetch } from 'undici';

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
}

export function createProviderHttp(options: ProviderHttpOptions): ProviderHttp {
  const extra = options.caFile === undefined ? [] : [readFileSync(options.caFile, 'utf8')];
  const dispatcher = new Agent({
    connect: { ca: [...rootCertificates, ...extra], timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
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
    });
    return { status: res.status, body: await cappedBody(res) };
  };
  return {
    async getJson(url, signal = AbortSignal.timeout(options.timeoutMs)) {
      const { status, body } = await text(url, undefined, signal);
      if (status !== 200) throw new Error(`${url} answered ${status}`);
      return JSON.parse(body) as unknown;
    },
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
    async jwksFetch(url, { headers, signal }) {
      const { status, body } = await text(url, headers, signal);
      return new Response(body, { status, headers: { 'content-type': 'application/json' } });
    },
    close: () => dispatcher.close(),
  };
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
