/**
 * The operations endpoints — `/healthz`, `/readyz`, `/metrics` and, when
 * enabled, `POST /config/reload` — on the admin listener, or on the main
 * listener when no admin listener is configured.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../errors.js';
import { sendError } from '../respond.js';
import type { RequestScope } from '../scope.js';
import type { Metrics } from './metrics.js';
import type { Readiness } from './readiness.js';

export type OpsHandler = (
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
  scope: RequestScope,
) => boolean;

export interface OpsDeps {
  metrics: Metrics;
  readiness: Readiness;
  /** Present when `admin.configReload` is on: re-reads the config file. */
  reload?: () => Promise<{ ok: true } | { ok: false; problems: string[] }>;
}

export const OPS_PATHS = ['/healthz', '/readyz', '/metrics', '/config/reload'];

export function createOpsHandler(deps: OpsDeps): OpsHandler {
  return (path, req, res, scope) => {
    if (!OPS_PATHS.includes(path)) return false;
    scope.route = 'admin';
    serve(path, req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, err);
    });
    return true;
  };

  async function serve(path: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (path === '/config/reload') {
      if (deps.reload === undefined)
        throw new GatewayError('not_found', 'Config reload is not enabled (admin.configReload).');
      if (req.method !== 'POST')
        throw new GatewayError('method_not_allowed', 'Use POST.', { headers: { allow: 'POST' } });
      const result = await deps.reload();
      return json(
        res,
        result.ok ? 200 : 400,
        result.ok ? { reloaded: true } : { reloaded: false, problems: result.problems },
      );
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      throw new GatewayError('method_not_allowed', 'Use GET.', { headers: { allow: 'GET, HEAD' } });
    }
    if (path === '/healthz') return json(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      const { ready, reasons, store } = await deps.readiness.check();
      return json(
        res,
        ready ? 200 : 503,
        ready ? { status: 'ready', store } : { status: 'not ready', reasons, store },
      );
    }
    const body = await deps.metrics.registry.metrics();
    res
      .writeHead(200, {
        'content-type': deps.metrics.registry.contentType,
        'cache-control': 'no-store',
      })
      .end(body);
  }
}

function json(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res
    .writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      'content-length': String(Buffer.byteLength(body)),
    })
    .end(body);
}
