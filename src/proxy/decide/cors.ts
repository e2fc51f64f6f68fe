/**
 * CORS for browser apps (config `cors`, per route and for the identity
 * endpoints), on the `cors` package. The gateway answers a preflight itself,
 * before authentication (a browser never sends a token on one), and sets the
 * CORS headers on `res` before anything else answers, so the gateway's own
 * 401/403/5xx carry them too and a page can read why it was refused. On a
 * forwarded answer the gateway's CORS headers win over the upstream's
 * (`keepGatewayCors`).
 *
 * An origin not listed gets no `Access-Control-Allow-Origin`: the browser
 * then refuses the page the answer. CORS is the browser's rule, not access
 * control: a request without a good token is refused either way.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import cors from 'cors';
import type { CorsConfig } from '../../config/index.js';

export interface Cors {
  /** Answers a preflight (204) and returns true; false for any other request. */
  preflight(req: IncomingMessage, res: ServerResponse): boolean;
  /** Sets the CORS headers of an actual request's answer on `res`, before it is written. */
  decorate(req: IncomingMessage, res: ServerResponse): void;
}

export function compileCors(config: CorsConfig): Cors {
  const middleware = cors({
    origin: config.origins.includes('*') ? '*' : config.origins.map(originMatcher),
    methods: config.methods,
    allowedHeaders: config.headers,
    exposedHeaders: config.exposeHeaders,
    credentials: config.credentials,
    maxAge: config.maxAgeSeconds,
    preflightContinue: false,
    optionsSuccessStatus: 204,
  });
  return {
    preflight(req, res) {
      if (!isPreflight(req)) return false;
      middleware(req, res, noop);
      return true;
    },
    decorate(req, res) {
      // `cors` takes every OPTIONS for a preflight; an OPTIONS that is not one
      // (no Access-Control-Request-Method) goes on to the upstream and is
      // decorated like any actual request. Only the method and headers are read.
      middleware({ method: 'GET', headers: req.headers }, res, noop);
    },
  };
}

/** A CORS preflight (Fetch standard §3.2.2): OPTIONS, an Origin, the method the page wants. */
function isPreflight(req: IncomingMessage): boolean {
  return (
    req.method === 'OPTIONS' &&
    req.headers.origin !== undefined &&
    req.headers['access-control-request-method'] !== undefined
  );
}

/** `https://*.example.com` is one label in place of `*`; any other origin is itself. */
function originMatcher(origin: string): string | RegExp {
  if (!origin.includes('*')) return origin;
  const [scheme, rest] = origin.split('://*.') as [string, string];
  return new RegExp(`^${escape(scheme)}://[a-z0-9-]+\\.${escape(rest)}$`);
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function noop(): void {}
