/**
 * The main listener's HTTP/2 and TLS counters: connections and streams
 * refused by the hardening of `gateway/main-listener.ts` (docs/http2.md,
 * "Limits"), and the reloads of `listen.tls`'s certificate.
 */
import { Counter, type Registry } from 'prom-client';

/** Why an HTTP/2 connection or stream was refused (the `reason` label). */
export const HTTP2_REFUSALS = [
  /** Streams opened and reset faster than the bucket allows (CVE-2023-44487): GOAWAY ENHANCE_YOUR_CALM. */
  'rapid_reset',
  /** PING or SETTINGS frames sent faster than their answers are read (nghttp2's flood guard): the connection ends. */
  'flood',
  /** A connection ended by a protocol error of the client: invalid frames, a header block that never ends. */
  'protocol_error',
  /** A connection opened without the 24-byte preface or an HTTP/1.1 request in time (h2c sniffing). */
  'preface_timeout',
] as const;
export type Http2Refusal = (typeof HTTP2_REFUSALS)[number];

export function registerHttp2Metrics(registry: Registry) {
  const refusals = new Counter({
    name: 'tenant_gateway_http2_refusals_total',
    help: 'HTTP/2 connections and streams the main listener refused, by reason: rapid_reset, flood, protocol_error, preface_timeout.',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  for (const reason of HTTP2_REFUSALS) refusals.inc({ reason }, 0);
  const tlsReloads = new Counter({
    name: 'tenant_gateway_tls_reloads_total',
    help: "Reloads of listen.tls's certificate and key, by result: success, or failure (the old pair kept serving).",
    labelNames: ['result'] as const,
    registers: [registry],
  });
  for (const result of ['success', 'failure']) tlsReloads.inc({ result }, 0);
  return {
    http2Refused: (reason: Http2Refusal) => refusals.inc({ reason }),
    tlsReload: (ok: boolean) => tlsReloads.inc({ result: ok ? 'success' : 'failure' }),
  };
}
