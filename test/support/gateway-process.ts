/**
 * Runs the built gateway (`node dist/cli.js serve --config F`) as an operator
 * does: a child process of its own, signalled from outside, its config file
 * rewritten on disk. For tests of what only a whole process shows — signals,
 * draining, exit codes, reloads.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

export const CLI = resolve(import.meta.dirname, '../../dist/cli.js');
const START_TIMEOUT_MS = 15_000;
const LOG_TIMEOUT_MS = 10_000;

/** One JSON line of the gateway's pino log (stdout). */
export type LogLine = Record<string, unknown> & { msg?: string };

export interface GatewayProcessOptions {
  /**
   * Files written into the config's folder first (relative paths in the config
   * resolve there); a name may hold folders (`keys/test.pem`).
   */
  files?: Record<string, string>;
  /** Extra environment (the child gets PATH and this, nothing of the test runner's). */
  env?: Record<string, string>;
}

export interface GatewayProcess {
  /** `http://127.0.0.1:<port>` of the main listener. */
  url: string;
  /** The admin listener, when the config has `admin` (read from the `listening` log line). */
  adminUrl: string | undefined;
  pid: number;
  /** The folder of the config file (removed on cleanup). */
  dir: string;
  configPath: string;
  /** Replaces the config file on disk; nothing happens until a reload. */
  rewriteConfig(text: string): void;
  signal(name: NodeJS.Signals): void;
  /**
   * Sends SIGHUP and resolves with the log line that tells how the reload
   * ended (`config reloaded…` or `config reload refused…`).
   */
  sighup(): Promise<LogLine>;
  /** Resolves once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything it printed so far, stdout then stderr. */
  output(): string;
  /** The JSON log lines of stdout so far, in order. */
  logLines(): LogLine[];
  /** Waits for a log line at index `from` or later that satisfies `match`. */
  waitForLog(match: (line: LogLine) => boolean, from?: number): Promise<LogLine>;
  /** SIGKILL (when still running); resolves once it has exited. */
  kill(): Promise<void>;
}

/** The user and org tenant of {@link SEED_YAML}. */
export const OPERATOR = { email: 'olga@example.com', password: 'olga-password-1' };
export const TENANT = 'acme';

/** A seed file (DESIGN §3) with one user and one org tenant she belongs to. */
export const SEED_YAML = `
users:
  - { email: ${OPERATOR.email}, password: "${OPERATOR.password}" }
tenants:
  - { tenant_id: ${TENANT}, type: orgtenant, name: Acme, cloud_region: eu-west-1, created_by: ${OPERATOR.email}, members: [${OPERATOR.email}] }
`;

/** A signing key at `keys/test.pem`, for configs with `tokens: { keys: ./keys }` (serve refuses a missing folder). */
export function signingKeyFile(): Record<string, string> {
  const { privateKey } = generateKeyPairSync('ed25519');
  return { 'keys/test.pem': privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
}

const running = new Set<GatewayProcess>();
// A test process that dies without its cleanup must not leave gateways behind.
process.on('exit', () => {
  for (const gw of running) {
    try {
      process.kill(gw.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/**
 * Writes `configText` to `gateway.yaml` in a temp folder, starts `serve` on it
 * and resolves once the process reports `tenant-gateway listening on URL`.
 * The config should listen on port 0 and log at `info` (the default) or lower,
 * so that the admin address and reload outcomes can be read from the log.
 */
export async function startGatewayProcess(
  configText: string,
  opts: GatewayProcessOptions = {},
): Promise<GatewayProcess> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  const dir = mkdtempSync(join(tmpdir(), 'tg-proc-'));
  for (const [name, text] of Object.entries(opts.files ?? {})) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  const configPath = join(dir, 'gateway.yaml');
  writeFileSync(configPath, configText);

  const child = spawn(process.execPath, [CLI, 'serve', '--config', configPath], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const lines: LogLine[] = [];
  let partial = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    stdout += text;
    partial += text;
    const complete = partial.split('\n');
    partial = complete.pop() ?? '';
    for (const line of complete) {
      try {
        lines.push(JSON.parse(line) as LogLine);
      } catch {
        // not a log line
      }
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  const output = () => `${stdout}${stderr}`;

  const waitForLog = async (match: (line: LogLine) => boolean, from = 0): Promise<LogLine> => {
    const deadline = Date.now() + LOG_TIMEOUT_MS;
    for (;;) {
      const found = lines.slice(from).find(match);
      if (found !== undefined) return found;
      if (Date.now() > deadline || hasExited(child))
        throw new Error(`no such log line within ${LOG_TIMEOUT_MS} ms; output:\n${output()}`);
      await sleep(20);
    }
  };

  let gw: GatewayProcess | undefined;
  const kill = async () => {
    if (!hasExited(child)) child.kill('SIGKILL');
    await exited;
    if (gw !== undefined) running.delete(gw);
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const url = await waitForListening(() => stderr, child);
    const listening = await waitForLog((l) => l.msg === 'listening');
    const admin = listening['admin'];
    gw = {
      url,
      adminUrl: typeof admin === 'string' ? admin : undefined,
      pid: child.pid as number,
      dir,
      configPath,
      rewriteConfig: (text) => writeFileSync(configPath, text),
      signal: (name) => void child.kill(name),
      async sighup() {
        const from = lines.length;
        child.kill('SIGHUP');
        return waitForLog((l) => /^config reload/.test(l.msg ?? ''), from);
      },
      exited,
      output,
      logLines: () => lines,
      waitForLog,
      kill,
    };
    running.add(gw);
    return gw;
  } catch (err) {
    await kill();
    throw err;
  }
}

/** Kills every gateway process still running and removes their folders: for `afterEach`/`afterAll`. */
export async function stopGatewayProcesses(): Promise<void> {
  await Promise.all([...running].map((gw) => gw.kill()));
}

/** Runs `node dist/cli.js ...args` to completion (for the admin commands, such as `keys add`). */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

async function waitForListening(stderr: () => string, child: ChildProcess): Promise<string> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const found = /tenant-gateway listening on (http:\/\/\S+)/.exec(stderr());
    if (found?.[1] !== undefined) return found[1];
    if (hasExited(child)) throw new Error(`the gateway exited before listening:\n${stderr()}`);
    if (Date.now() > deadline)
      throw new Error(`the gateway did not listen within ${START_TIMEOUT_MS} ms:\n${stderr()}`);
    await sleep(20);
  }
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
