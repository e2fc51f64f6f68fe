/**
 * OpenTelemetry traces, built from the official SDK without its
 * globals: the gateway owns its provider, context manager and propagator, so
 * two gateways in one process never share them, and nothing is touched when
 * tracing is off — the request path then sees `scope.trace === undefined`
 * and does nothing else.
 *
 * One server span per request (continuing the client's W3C trace context
 * when the peer is a trusted proxy), one client span per upstream call whose
 * context is the `traceparent` the upstream receives, and child spans for
 * store calls and password checks, found through the active context.
 *
 * The SDK costs ~0.3 s of CPU to load: the composition root imports this
 * module only when `tracing.enabled` (`gateway/telemetry.ts`); a request's
 * trace is read through `trace-of.ts`, which loads none of it.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/index.js';
import type { RequestEnd, RequestTrace, UpstreamCall } from '../http/scope.js';
import { VERSION } from '../version.js';
import { setTraceOf } from './trace-of.js';

type TracingConfig = GatewayConfig['tracing'];

/** Ends a step's span: with the error that ended the step, if any. */
export type StepEnd = (error?: unknown) => void;

export interface Tracing {
  /** Starts a request's server span and runs `handle` with it active. */
  handle<A extends unknown[]>(
    req: IncomingMessage,
    handle: (req: IncomingMessage, ...rest: A) => void,
    ...rest: A
  ): void;
  /** A child span of the active request's span, or undefined outside a traced request. */
  step(name: string, kind?: SpanKind): StepEnd | undefined;
  /**
   * Exports what is buffered and stops: waits at most {@link FINAL_EXPORT_MS}
   * for the collector, and never fails (a collector that is down is a warning).
   */
  shutdown(): Promise<void>;
}

const headerGetter: TextMapGetter<IncomingHttpHeaders> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

/** Undefined when tracing is off: the request path then pays one undefined check. */
export function createTracing(
  config: TracingConfig,
  trusted: (peer: string | undefined) => boolean,
  log: Logger,
): Tracing | undefined {
  if (!config.enabled) return undefined;
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.name': config.serviceName,
      'service.version': VERSION,
    }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampleRatio) }),
    spanProcessors: [
      new BatchSpanProcessor(
        reportingFailures(new OTLPTraceExporter({ url: config.otlpEndpoint }), log),
      ),
    ],
  });
  const tracer = provider.getTracer('tenant-gateway', VERSION);
  const contexts = new AsyncLocalStorageContextManager().enable();
  const propagator = new W3CTraceContextPropagator();

  const startRequest = (req: IncomingMessage): ServerTrace => {
    // Another's trace context is continued only from a proxy we trust.
    const parent = trusted(req.socket.remoteAddress)
      ? propagator.extract(ROOT_CONTEXT, req.headers, headerGetter)
      : ROOT_CONTEXT;
    const span = tracer.startSpan(
      req.method ?? 'HTTP',
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method ?? '' } },
      parent,
    );
    return new ServerTrace(tracer, propagator, span, trace.setSpan(parent, span), req.method);
  };

  return {
    handle(req, handle, ...rest) {
      const requestTrace = startRequest(req);
      setTraceOf(req, requestTrace);
      // Unsampled: no child span will be recorded, so no context is carried
      // (AsyncLocalStorage is what tracing costs most per request).
      if (!requestTrace.recording) handle(req, ...rest);
      else contexts.with(requestTrace.context, handle, undefined, req, ...rest);
    },
    step(name, kind = SpanKind.INTERNAL) {
      const active = contexts.active();
      if (trace.getSpan(active) === undefined) return undefined;
      const span = tracer.startSpan(name, { kind }, active);
      return (error) => {
        if (error !== undefined) failSpan(span, error);
        span.end();
      };
    },
    async shutdown() {
      await finalExport(provider.shutdown(), log);
      contexts.disable();
    },
  };
}

/**
 * How long a stop waits for the spans still buffered to be exported. The
 * exporter retries a collector that is down for up to 10 s; a stop does not
 * wait that long, nor fail for it: the spans are dropped, with a warning.
 */
export const FINAL_EXPORT_MS = 2000;

async function finalExport(shutdown: Promise<void>, log: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<'gave up'>((resolve) => {
    timer = setTimeout(() => resolve('gave up'), FINAL_EXPORT_MS);
  });
  const exported = shutdown.then(
    () => 'exported' as const,
    (err: unknown) => ({ err }),
  );
  const outcome = await Promise.race([exported, gaveUp]);
  clearTimeout(timer);
  if (outcome === 'gave up')
    log.warn(
      { waitedMs: FINAL_EXPORT_MS },
      'stopping without the last spans: the collector did not take them in time',
    );
  else if (outcome !== 'exported')
    log.warn(
      { code: (outcome.err as NodeJS.ErrnoException | undefined)?.code },
      'stopping without the last spans: the collector refused them',
    );
}

class ServerTrace implements RequestTrace {
  readonly traceId: string;
  /** Sampled: its spans are recorded and exported. */
  readonly recording: boolean;

  constructor(
    private readonly tracer: Tracer,
    private readonly propagator: W3CTraceContextPropagator,
    private readonly span: Span,
    /** The span's context: the parent of every span the request starts. */
    readonly context: Context,
    private readonly method = 'HTTP',
  ) {
    this.traceId = span.spanContext().traceId;
    this.recording = span.isRecording();
  }

  upstreamCall(method: string, upstream: string, headers: IncomingHttpHeaders): UpstreamCall {
    const url = new URL(upstream);
    const span = this.tracer.startSpan(
      method,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': method,
          'server.address': url.hostname,
          'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
        },
      },
      this.context,
    );
    // The client's own trace headers never pass: the upstream hears ours.
    headers.traceparent = undefined;
    headers.tracestate = undefined;
    this.propagator.inject(trace.setSpan(this.context, span), headers, headerSetter);
    return {
      answered: (status) => span.setAttribute('http.response.status_code', status),
      end: (error) => {
        if (error !== undefined) failSpan(span, error);
        span.end();
      },
    };
  }

  finish(end: RequestEnd): void {
    const span = this.span;
    // The route label, not the path: paths carry ids (and a label set stays bounded).
    span.updateName(`${this.method} ${end.route}`);
    span.setAttributes({
      'http.route': end.route,
      'http.response.status_code': end.status,
      'tenant_gateway.outcome': end.outcome,
      ...(end.reason === '' ? {} : { 'tenant_gateway.reason': end.reason }),
      ...(end.userId === undefined ? {} : { 'enduser.id': end.userId }),
      ...(end.tenantId === undefined ? {} : { 'tenant_gateway.tenant_id': end.tenantId }),
    });
    if (end.outcome === 'failed')
      span.setStatus({ code: SpanStatusCode.ERROR, message: end.reason });
    span.end();
  }
}

const headerSetter: TextMapSetter<IncomingHttpHeaders> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/** Marks a span failed with the error's name and code, never its message (it may quote input). */
export function failSpan(span: Span, error: unknown): void {
  const code = (error as { code?: unknown } | undefined)?.code;
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: typeof code === 'string' ? code : ((error as Error | undefined)?.name ?? 'error'),
  });
}

/**
 * The exporter, with failed exports logged: at most one line a minute, so a
 * collector that is down is seen without flooding the log.
 */
function reportingFailures(exporter: SpanExporter, log: Logger): SpanExporter {
  let lastWarned = 0;
  return {
    export(spans: ReadableSpan[], done) {
      exporter.export(spans, (result) => {
        if (result.code !== ExportResultCode.SUCCESS && Date.now() - lastWarned > 60_000) {
          lastWarned = Date.now();
          log.warn(
            {
              code: (result.error as NodeJS.ErrnoException | undefined)?.code,
              spans: spans.length,
            },
            'exporting traces failed; spans are dropped while the collector is unreachable',
          );
        }
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}
