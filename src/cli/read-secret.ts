/**
 * Passwords (and IdP client secrets) for CLI commands come from an environment variable or standard
 * input, never from argv (where `ps` and shell history would show them).
 */
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { cliIo } from './io.js';
import { UsageError } from './usage-error.js';

/** @throws UsageError when the variable is unset or nothing was given. */
export async function readSecret(options: {
  envVar?: string;
  prompt: string;
  /** The refusal when nothing was given; by default it speaks of a password. */
  nothingGiven?: string;
}): Promise<string> {
  if (options.envVar !== undefined) {
    const value = cliIo().env[options.envVar];
    if (value === undefined || value === '') {
      throw new UsageError(`environment variable ${options.envVar} is not set`);
    }
    return value;
  }
  const { stdin } = cliIo();
  const secret = stdin.isTTY ? await promptHidden(options.prompt) : await readStdin();
  if (secret === '') {
    throw new UsageError(
      options.nothingGiven ??
        'no password given: pipe it on stdin or name a variable with --password-env',
    );
  }
  return secret;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of cliIo().stdin) chunks.push(Buffer.from(chunk));
  // One trailing newline is the terminator of `echo`, not part of the password.
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

async function promptHidden(prompt: string): Promise<string> {
  const { stdin, stderr } = cliIo();
  stderr.write(prompt);
  const muted = new Writable({ write: (_chunk, _enc, done) => done() });
  const rl = createInterface({ input: stdin, output: muted, terminal: true });
  const line = await new Promise<string>((resolve) => rl.once('line', resolve));
  rl.close();
  stderr.write('\n');
  return line;
}
