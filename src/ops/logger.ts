/**
 * The process logger (pino). Secrets never reach a log line: the paths below
 * are censored wherever they appear, and the code logs no request headers or
 * bodies beyond them in the first place.
 */
import pino, { type Logger } from 'pino';

export const REDACTED_PATHS = [
  'password',
  'passwordHash',
  'token',
  'access_token',
  'authorization',
  '*.password',
  '*.passwordHash',
  '*.token',
  '*.access_token',
  '*.authorization',
  'headers.authorization',
  'headers.cookie',
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
];

export function createLogger(options: {
  level: string;
  pretty?: boolean;
  destination?: NodeJS.WritableStream;
}): Logger {
  const base = {
    level: options.level,
    base: { service: 'tenant-gateway' },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  if (options.pretty) {
    return pino({ ...base, transport: { target: 'pino-pretty', options: { colorize: false } } });
  }
  return options.destination === undefined
    ? pino(base)
    : pino(base, options.destination as pino.DestinationStream);
}

/**
 * The logger of the access log's one line per request. Its fields are a
 * fixed list that holds no secret by construction (method, the path without
 * its query, route, status, durations, tenant and user ids, an error CODE),
 * so it skips the redaction walk, which measured two thirds of a line's cost
 * on the proxy path (`test/bench/README.md`, issue 13). Same destination,
 * level and base fields as `log`.
 */
export function accessLogger(log: Logger): Logger {
  return log.child({}, { redact: { paths: [] } });
}
