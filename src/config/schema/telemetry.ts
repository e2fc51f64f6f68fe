/**
 * What the gateway tells its operators: the log, the OpenTelemetry traces,
 * and the audit streams kept in the store.
 */
import { z } from 'zod';
import { boolean, decimal, httpUrl, integer } from './values.js';

/**
 * Lines are gathered and written together, as nginx's `buffer=`/`flush=`:
 * one write per `bytes` instead of one per line. Memory stays bounded: the
 * write is blocking, as an unbuffered log's is, so the buffer never
 * holds more than `bytes` and one line.
 */
const logBuffer = z
  .strictObject({
    bytes: integer(0, 1024 * 1024)
      .default(8192)
      .describe('lines are written once this many bytes are waiting; 0 writes each line at once'),
    flushMs: integer(10, 60_000).default(1000).describe('the longest a line waits in the buffer'),
  })
  .meta({
    description:
      'Batched writes of the log, flushed on SIGTERM/SIGINT, on a `fatal` line and before exit.',
    examples: [{ bytes: 65536, flushMs: 2000 }],
  })
  .prefault({});

/** The `log` section. */
export const log = z
  .strictObject({
    level: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info')
      .describe('the least severe level logged'),
    pretty: boolean()
      .default(false)
      .describe('human-readable logs (pino-pretty) instead of JSON lines'),
    buffer: logBuffer,
  })
  .meta({
    description: 'Logs (JSON lines on standard output).',
    examples: [{ level: 'debug', pretty: true }],
  })
  .prefault({});

/**
 * A client's `traceparent` is continued only from `trustedProxies`: anyone
 * else could choose the trace id of the gateway's spans and force every
 * request into the sample.
 */
export const tracing = z
  .strictObject({
    enabled: boolean()
      .default(false)
      .describe('OpenTelemetry traces; off, nothing is added and `traceparent` passes through'),
    otlpEndpoint: httpUrl
      .default('http://localhost:4318/v1/traces')
      .describe(
        'the OTLP/HTTP traces URL of a collector, path included (as `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)',
      ),
    serviceName: z
      .string()
      .min(1)
      .max(200)
      .default('tenant-gateway')
      .describe('`service.name` of the spans'),
    sampleRatio: decimal(0, 1)
      .default(0.1)
      .describe(
        "share of new traces recorded; a trace continued from a trusted proxy follows its parent's decision",
      ),
  })
  .meta({
    description: 'OpenTelemetry traces, off by default (see [Operations](operations.md#traces)).',
    examples: [
      { enabled: true, otlpEndpoint: 'http://otel-collector:4318/v1/traces', sampleRatio: 0.05 },
    ],
  })
  .prefault({});

/** The `audit` section. */
export const audit = z
  .strictObject({
    maxEventsPerStream: integer(100, 10_000_000)
      .default(10_000)
      .describe(
        'events each audit stream keeps (one per tenant, one for user-level events); Redis trims in whole nodes, so up to 100 more',
      ),
    maxAgeDays: integer(1, 3650)
      .optional()
      .describe(
        'events older than this are dropped at the next event of their stream; omitted: only the count bounds a stream',
      ),
  })
  .meta({
    description:
      'The audit streams (docs/audit.md): logins, tokens, password and membership changes, kept in the store.',
    examples: [{ maxEventsPerStream: 50000, maxAgeDays: 90 }],
  })
  .prefault({});
