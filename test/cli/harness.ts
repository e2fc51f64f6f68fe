/**
 * Runs the command line as a user does, against a private redis-server, with
 * temp config and key folders. A command runs in this process through
 * `runCli(argv, io)` (the code `node dist/cli.js` runs, with its own
 * environment, stdin, stdout and stderr, and its exit code), which costs
 * milliseconds instead of a Node start; `serve`, and every command of
 * `bin`, runs the built binary as a child process, to prove the binary, its
 * argv and its exit codes.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { expect } from 'vitest';
import { generateKeyFile } from '../../src/auth/tokens/keys.js';
import { runCli } from '../../src/cli/run.js';
import { startRedisServer } from '../support/redis-server.js';

export const CLI = resolve(import.meta.dirname, '../../dist/cli.js');
/**
 * Longest a single CLI run may take before it fails the test (in-process), or
 * is killed and fails it (the binary): a run of the binary is a Node start,
 * several of them seconds on a loaded 2-core machine.
 */
const RUN_TIMEOUT_MS = 30_000;
/** Longest a `serve` may take to listen: it starts Node, the gateway and its password workers. */
const SERVE_TIMEOUT_MS = 30_000;

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string>;
  /** Written to stdin, which is then closed (empty when not given). */
  input?: string;
}

/** A `serve` process of the built CLI, listening. */
export interface Served {
  /** `http://127.0.0.1:PORT` of its listener. */
  base: string;
  /** SIGTERM (SIGKILL after 5 s); resolves with the exit code, or the reason it was killed. */
  stop(): Promise<number | null | string>;
}

/** A folder of its own with a config on the test Redis, under a key prefix of its own. */
export interface Case {
  dir: string;
  config: string;
  /** `tokens.keys` of the config. */
  keys: string;
  /** `--config <file>`, to append to a command. */
  c: string[];
}

/** Runs CLI commands and checks their outcome. */
export interface CliRunner {
  cli(args: string[], options?: RunOptions): Promise<Run>;
  /** Runs a command that must succeed silently on stderr; returns stdout parsed as JSON. */
  ok<T = unknown>(args: string[], options?: RunOptions): Promise<T>;
  /** Runs a command that must fail with exit 1, no output and no stack trace; returns stderr. */
  fails(args: string[], options?: RunOptions): Promise<string>;
}

/** Commands run in-process (`serve` as the binary); `bin` runs each as `node dist/cli.js`. */
export interface CliHarness extends CliRunner {
  /** Temp folder for files of the tests; removed by stop(). */
  root: string;
  /** The whole environment of a CLI run: no GATEWAY_CONFIG leaks in from the test runner. */
  env(): Record<string, string>;
  /** The same commands, each run as a child process of the built binary. */
  bin: CliRunner;
  /** `extra` lines are appended to the config. */
  newCase(extra?: string): Case;
  /**
   * Writes a signing key into the case's `tokens.keys`, as `keys add` does,
   * without a CLI run; returns its path. Every store command generates one
   * in an empty folder, so runs started together on a new case would race to
   * write it: a case that starts runs together has its key first.
   */
  addKey(kase: Case): Promise<string>;
  /** `audit tail --tenant T` on the case, which must succeed: the tenant's events, one JSON line each. */
  auditOf(kase: Case, tenantId: string): Promise<string>;
  /** Writes `text` as a seed file in the case's folder; returns its path. */
  writeSeed(kase: Case, text: string): string;
  /** Starts `serve` on the case's config (`env` added to its environment); resolves once it listens. Stop it in a finally. */
  serve(kase: Case, options?: { env?: Record<string, string> }): Promise<Served>;
  stop(): Promise<void>;
}

let shared: { harness: Promise<CliHarness>; users: number } | undefined;

/**
 * One harness (one redis-server) for the suites a test file gathers: each
 * takes it in its beforeAll and gives it back in its afterAll
 * ({@link releaseCliHarness}); the last one to give it back stops it.
 */
export function sharedCliHarness(): Promise<CliHarness> {
  shared ??= { harness: startCliHarness(), users: 0 };
  shared.users++;
  return shared.harness;
}

/** Gives back what {@link sharedCliHarness} gave. */
export async function releaseCliHarness(): Promise<void> {
  if (shared === undefined || --shared.users > 0) return;
  const { harness } = shared;
  shared = undefined;
  await (await harness).stop();
}

export async function startCliHarness(): Promise<CliHarness> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  const redis = await startRedisServer();
  const root = mkdtempSync(join(tmpdir(), 'tg-cli-'));

  const env = (): Record<string, string> => ({
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    TG_TEST_REDIS_URL: redis.url,
  });

  const spawned = (args: string[], options: RunOptions = {}): Promise<Run> =>
    runBinary(args, { ...env(), ...options.env }, root, options.input);
  const inProcess = (args: string[], options: RunOptions = {}): Promise<Run> =>
    args[0] === 'serve'
      ? spawned(args, options)
      : runInProcess(args, { ...env(), ...options.env }, options.input);

  return {
    root,
    env,
    ...checked(inProcess),
    bin: checked(spawned),
    newCase(extra = '') {
      const dir = mkdtempSync(join(root, 'case-'));
      // The folder `tokens.keys` names exists (empty): serve and config check refuse a missing one.
      mkdirSync(join(dir, 'keys'), { mode: 0o700 });
      const config = join(dir, 'gateway.yaml');
      writeFileSync(
        config,
        [
          'listen: { host: 127.0.0.1, port: 0 }',
          'store:',
          // through ${ENV}, as an operator keeps the Redis URL out of the file; no
          // outage here: a command waits out a busy machine (a run shares this process)
          `  redis: { url: "\${TG_TEST_REDIS_URL}", keyPrefix: "tg-cli-${randomUUID()}:", commandTimeoutMs: 10000 }`,
          'tokens: { keys: ./keys }',
          'passwords: { bcryptCost: 4 }',
          'log: { level: warn }',
          extra,
        ].join('\n'),
      );
      return { dir, config, keys: join(dir, 'keys'), c: ['--config', config] };
    },
    addKey(kase) {
      return generateKeyFile(kase.keys);
    },
    async auditOf(kase, tenantId) {
      const run = await inProcess(['audit', 'tail', '--tenant', tenantId, ...kase.c]);
      expect(run.code).toBe(0);
      return run.stdout;
    },
    writeSeed(kase, text) {
      const file = join(kase.dir, `seed-${randomUUID()}.yaml`);
      writeFileSync(file, text);
      return file;
    },
    async serve(kase, options = {}) {
      const child = spawn(process.execPath, [CLI, 'serve', ...kase.c], {
        env: { ...env(), ...options.env },
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      const stop = async (): Promise<number | null | string> => {
        child.kill('SIGTERM');
        // A gateway that does not stop is killed, so that it never outlives the test.
        const stopped = await Promise.race([
          exited,
          new Promise<string>((r) => setTimeout(() => r('still running after SIGTERM'), 5000)),
        ]);
        if (typeof stopped === 'string') child.kill('SIGKILL');
        return stopped;
      };
      let stderr = '';
      try {
        const base = await new Promise<string>((resolveBase, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`no listening line:\n${stderr}`)),
            SERVE_TIMEOUT_MS,
          );
          child.stdout.resume();
          child.stderr.on('data', (chunk: Buffer) => {
            stderr += chunk.toString();
            const match = /listening on (http:\/\/127\.0\.0\.1:(\d+))\n/.exec(stderr);
            if (match !== null) {
              clearTimeout(timer);
              resolveBase(match[1] as string);
            }
          });
          void exited.then((code) => reject(new Error(`serve exited ${code}:\n${stderr}`)));
        });
        return { base, stop };
      } catch (err) {
        await stop();
        throw err;
      }
    },
    async stop() {
      await redis.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** `cli` with the checks of `ok` and `fails` on what it returns. */
function checked(cli: CliRunner['cli']): CliRunner {
  return {
    cli,
    async ok<T>(args: string[], options?: RunOptions): Promise<T> {
      const run = await cli(args, options);
      expect(run, `tenant-gateway ${args.join(' ')}`).toMatchObject({ code: 0, stderr: '' });
      return JSON.parse(run.stdout) as T;
    },
    async fails(args, options) {
      const run = await cli(args, options);
      expect(run.code, `tenant-gateway ${args.join(' ')}\n${run.stderr}`).toBe(1);
      expect(run.stderr).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
      expect(run.stdout).toBe('');
      return run.stderr;
    },
  };
}

/** A text sink for stdout or stderr of an in-process run. */
function sink(): { stream: Writable; text(): string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

/** `runCli(args)` with `env` as its whole environment and `input` as its stdin. */
async function runInProcess(args: string[], env: Record<string, string>, input = ''): Promise<Run> {
  const stdout = sink();
  const stderr = sink();
  const stdin = Readable.from(input === '' ? [] : [Buffer.from(input)]);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`tenant-gateway ${args.join(' ')} timed out\n${stderr.text()}`)),
      RUN_TIMEOUT_MS,
    );
  });
  try {
    const io = { stdout: stdout.stream, stderr: stderr.stream, stdin, env };
    const code = await Promise.race([runCli(args, io), timedOut]);
    return { code, stdout: stdout.text(), stderr: stderr.text() };
  } finally {
    clearTimeout(timer);
  }
}

/** `node dist/cli.js ...args` in `cwd`, with `env` as its whole environment and `input` as its stdin. */
function runBinary(
  args: string[],
  env: Record<string, string>,
  cwd: string,
  input = '',
): Promise<Run> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env,
      cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tenant-gateway ${args.join(' ')} timed out\n${stderr}`));
    }, RUN_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolveRun({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}
