/**
 * The operations endpoints — `/healthz`, `/readyz`, `/metrics` and, when
 * enabled, `POST /config/reload` — on the admin listener. Without `admin`
 * they are served nowhere, unless `listen.opsEndpoints` asks for the first
 * three on the main listener (never `/config/reload`: whoever reaches the
 * public port must not make the gateway re-read its config).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../errors.js';
import { sendError } from '../http/respond.js';
import type { RequestScope } from '../http/scope.js';
import type { Metrics } from './metrics.js';
import { PROBE_PATHS, RELOAD_PATH } from '../config/ops-paths.js';
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
  /**
   * `admin`: the admin listener, `/config/reload` included; `listen`: the
   * main listener (`listen.opsEndpoints`), the probe paths only, so that
   * `/config/reload` stays a path routes may have.
   */
  listener: 'admin' | 'listen';
  /** Present when `admin.configReload` is on: re-reads the config file. */
  reload?: () => Promise<{ ok: true; needsRestart: string[] } | { ok: false; problems: string[] }>;
}

export function createOpsHandler(deps: OpsDeps): OpsHandler {
  const paths = deps.listener === 'admin' ? [...PROBE_PATHS, RELOAD_PATH] : PROBE_PATHS;
  return (path, req, res, scope) => {
    if (!paths.includes(path)) return false;
    scope.route = 'admin';
    serve(path, req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, err);
    });
    return true;
  };

  async function serve(path: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (path === RELOAD_PATH) {
      if (deps.reload === undefined)
        throw new GatewayError('not_found', 'Config reload is not enabled (admin.configReload).');
      if (req.method !== 'POST')
        throw new GatewayError('method_not_allowed', 'Use POST.', { headers: { allow: 'POST' } });
      const result = await deps.reload();
      return json(
        res,
        result.ok ? 200 : 400,
        result.ok
          ? { reloaded: true, needsRestart: result.needsRestart }
          : { reloaded: false, problems: result.problems },
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
