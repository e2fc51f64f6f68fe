/**
 * One run of the command line: parses `argv` (the words after `tenant-gateway`),
 * runs the command with `io`, and resolves with the exit code. An expected
 * refusal is one `error: …` line on stderr; anything else also shows its stack.
 */
import { CommanderError } from 'commander';
import { KeyLoadError } from '../auth/tokens/keys.js';
import { SeedError } from '../auth/seed.js';
import { ConfigError } from '../config/index.js';
import { isGatewayError } from '../errors.js';
import { cliIo, withCliIo, type CliIo } from './io.js';
import { buildProgram } from './program.js';
import { UsageError } from './usage-error.js';

/** @param io the process's own when not given */
export function runCli(argv: readonly string[], io?: CliIo): Promise<number> {
  return withCliIo(io, async () => {
    try {
      await buildProgram().parseAsync([...argv], { from: 'user' });
      return 0;
    } catch (err) {
      return refused(err);
    }
  });
}

function refused(err: unknown): number {
  // Commander has written its own message (usage errors, help, --version).
  if (err instanceof CommanderError) return err.exitCode;
  const expected =
    err instanceof ConfigError ||
    err instanceof SeedError ||
    err instanceof KeyLoadError ||
    err instanceof UsageError;
  const { stderr } = cliIo();
  if (expected) stderr.write(`error: ${err.message}\n`);
  else if (isGatewayError(err)) stderr.write(`error: ${err.code}: ${err.message}\n`);
  else stderr.write(`error: ${err instanceof Error ? err.stack : String(err)}\n`);
  return 1;
}
