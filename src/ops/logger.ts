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
