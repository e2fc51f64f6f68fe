/**
 * The process logger (pino). Secrets never reach a log line: the paths below
 * are censored wherever they appear, and the code logs no request headers or
 * bodies beyond them in the first place.
 */
import { createRequire } from 'node:module';
import pino, { type Logger, type LoggerOptions } from 'pino';
import { lineSafe, terminalSafe } from '../text/line-safe.js';
import { logOutput, type LogBuffer, type LogOutput } from './log-output.js';

export type { LogBuffer } from './log-output.js';

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
  buffer?: LogBuffer;
  destination?: NodeJS.WritableStream;
}): Logger {
  const base = {
    level: options.level,
    base: { service: 'tenant-gateway' },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    // Every line pino writes, whatever it carries (an audit event's e-mail, an
    // error's text): no raw U+2028/U+2029 or C1 control (`line-safe.ts`).
    hooks: { streamWrite: lineSafe },
  };
  if (options.pretty) return pino(base, prettyTerminal());
  if (options.destination !== undefined)
    return pino(base, options.destination as pino.DestinationStream);
  const out = standardOutput(options.buffer ?? { bytes: 0, flushMs: 1000 });
  return pino(
    { ...base, hooks: { ...base.hooks, logMethod: flushAfterFatal(out) } },
    out as pino.DestinationStream,
  );
}

/**
 * `log.pretty`: pino-pretty, in this thread, to standard output. It turns a
 * line's escapes back into the characters a client sent, so what it prints
 * is escaped again for the terminal (every control character but the line
 * feeds it lays its output out with).
 */
function prettyTerminal(): pino.DestinationStream {
  // Loaded here only: every CLI command creates a logger, few are pretty.
  const { prettyFactory } = createRequire(import.meta.url)(
    'pino-pretty',
  ) as typeof import('pino-pretty');
  const pretty = prettyFactory({ colorize: false });
  return {
    write(line: string) {
      process.stdout.write(terminalSafe(pretty(line), true));
    },
  };
}

/**
 * Standard output, written in batches of `buffer.bytes` (blocking writes, as
 * pino's own default: the buffer never holds more than `bytes` and a line),
 * at least every `buffer.flushMs`, and all of it before the process exits.
 */
function standardOutput(buffer: LogBuffer): LogOutput {
  const out = logOutput(1, buffer);
  if (buffer.bytes > 0) process.once('exit', () => flushQuietly(out));
  return out;
}

/** A `fatal` line is the last one a crashing process may write: out at once, with all before it. */
function flushAfterFatal(out: LogOutput): NonNullable<LoggerOptions['hooks']>['logMethod'] {
  return function (this: Logger, args, method, level) {
    method.apply(this, args);
    if (level >= FATAL) flushQuietly(out);
  };
}

const FATAL = 60;

function flushQuietly(out: LogOutput): void {
  try {
    out.flushSync();
  } catch {
    // Standard output is gone (a closed pipe): nothing left to tell.
  }
}
