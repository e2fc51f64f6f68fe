/**
 * An OTLP/HTTP trace receiver for tests: a real HTTP server on 127.0.0.1
 * that accepts what an exporter POSTs to `/v1/traces` and decodes it by the
 * OTLP/JSON mapping of the protobuf definitions (trace and span ids as hex,
 * 64-bit integers as strings). A request in another encoding is answered
 * 415 and recorded as a problem, so a test fails instead of seeing nothing.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One attribute value, as OTLP/JSON writes `AnyValue`. */
type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
};

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  statusMessage: string;
  /** The resource's `service.name`. */
  service: string;
}

export interface OtlpReceiver {
  /** The traces URL for `tracing.otlpEndpoint`. */
  url: string;
  spans: ReceivedSpan[];
  /** Requests the receiver could not decode. */
  problems: string[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const problems: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const type = req.headers['content-type'] ?? '';
      if (
        req.method !== 'POST' ||
        req.url !== '/v1/traces' ||
        !type.startsWith('application/json')
      ) {
        problems.push(`${req.method} ${req.url} ${type}`);
        res.writeHead(415).end();
        return;
      }
      try {
        spans.push(...decode(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch (err) {
        problems.push(String(err));
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    problems,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface ExportRequest {
  resourceSpans: {
    resource?: { attributes?: { key: string; value: AnyValue }[] };
    scopeSpans: {
      spans: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: { key: string; value: AnyValue }[];
        status?: { code?: number; message?: string };
      }[];
    }[];
  }[];
}

function decode(body: ExportRequest): ReceivedSpan[] {
  if (!Array.isArray(body.resourceSpans)) throw new Error('no resourceSpans');
  return body.resourceSpans.flatMap((rs) => {
    const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '');
    return rs.scopeSpans.flatMap((ss) =>
      ss.spans.map((s) => ({
        traceId: hexId(s.traceId, 32),
        spanId: hexId(s.spanId, 16),
        parentSpanId: s.parentSpanId ? hexId(s.parentSpanId, 16) : '',
        name: s.name,
        kind: s.kind,
        attributes: attributesOf(s.attributes),
        statusCode: s.status?.code ?? 0,
        statusMessage: s.status?.message ?? '',
        service,
      })),
    );
  });
}

function hexId(id: string, length: number): string {
  if (!new RegExp(`^[0-9a-f]{${length}}$`).test(id)) throw new Error(`not a hex id: ${id}`);
  return id;
}

function attributesOf(
  list: { key: string; value: AnyValue }[] | undefined,
): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
  }
  return out;
}
