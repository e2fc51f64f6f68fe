/**
 * Issue 21: the image, built the only way this machine can — no Docker
 * daemon, no base image to pull. The Dockerfile's own instructions are
 * followed in temporary folders: the build context is what .dockerignore
 * lets through, each stage's WORKDIR/COPY/RUN/ENV happen as written (the
 * RUNs on this Node, not the base image's), and the last stage's ENTRYPOINT
 * and CMD are started, as its USER when the test runs as root, with a
 * mounted config; then its HEALTHCHECK command is run. The base image is
 * stood in for by this test's own Node, copied in; what the base image
 * itself adds (its Node build, its OS) is not tested here.
 */
import { execFileSync, spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from '../support/ports.js';

const ROOT = join(import.meta.dirname, '../..');
const temp = mkdtempSync(join(tmpdir(), 'tg-image-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** `.dockerignore` as Docker reads it, for the pattern forms this project uses. */
function ignoredBy(lines: string[]): (path: string) => boolean {
  const rules = lines.map((line) => {
    const negated = line.startsWith('!');
    const pattern = negated ? line.slice(1) : line;
    let match: (path: string) => boolean;
    if (pattern === '*') match = () => true;
    else if (pattern === '**/*.pem') match = (p) => p.endsWith('.pem');
    else if (pattern === '**/keys/') match = (p) => `/${p}`.includes('/keys/');
    else if (/^[\w.-]+(\/[\w.-]+)*\/?$/.test(pattern)) {
      const plain = pattern.replace(/\/$/, '');
      match = (p) => p === plain || p.startsWith(`${plain}/`);
    } else throw new Error(`.dockerignore: a pattern this test cannot read: ${line}`);
    return { negated, match };
  });
  return (path) => {
    let ignored = false;
    for (const rule of rules) if (rule.match(path)) ignored = !rule.negated;
    return ignored;
  };
}

/** The build context: the repository's files .dockerignore lets through. */
function buildContext(): string {
  const context = join(temp, 'context');
  const ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const ignored = ignoredBy(ignore);
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((f) => f !== '' && existsSync(join(ROOT, f)) && !ignored(f));
  for (const file of files) {
    mkdirSync(dirname(join(context, file)), { recursive: true });
    cpSync(join(ROOT, file), join(context, file));
  }
  return context;
}

interface Stage {
  name: string;
  root: string;
  workdir: string;
  env: Record<string, string>;
  user?: string;
  entrypoint?: string[];
  cmd?: string[];
  healthcheck?: string[];
}

/** Follows the Dockerfile, stage by stage; returns the last stage. */
function followDockerfile(context: string): Stage {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const stages: Stage[] = [];
  const inStage = (stage: Stage, path: string) =>
    join(stage.root, posix.isAbsolute(path) ? path : posix.join(stage.workdir, path));
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [instruction, ...rest] = line.split(/\s+/);
    const args = rest.join(' ');
    const stage = stages.at(-1) as Stage;
    switch (instruction) {
      case 'FROM': {
        const name = /\bAS\s+(\S+)/i.exec(args)?.[1] ?? `stage${stages.length}`;
        const root = join(temp, `stage-${name}`);
        mkdirSync(root, { recursive: true });
        stages.push({ name, root, workdir: '/', env: {} });
        break;
      }
      case 'WORKDIR':
        stage.workdir = posix.resolve(stage.workdir, args);
        mkdirSync(inStage(stage, '.'), { recursive: true });
        break;
      case 'ENV':
        for (const [, k, v] of args.matchAll(/(\w+)=(\S+)/g)) stage.env[k as string] = v as string;
        break;
      case 'COPY': {
        const parts = args.split(/\s+/);
        const from = parts[0]?.startsWith('--from=')
          ? parts.shift()?.slice('--from='.length)
          : undefined;
        const dest = parts.pop() as string;
        for (const source of parts) {
          const origin =
            from === undefined
              ? join(context, source)
              : join((stages.find((s) => s.name === from) as Stage).root, source);
          if (!existsSync(origin))
            throw new Error(`COPY ${source}: not in the ${from ?? 'context'}`);
          const target = dest.endsWith('/')
            ? join(inStage(stage, dest), posix.basename(source))
            : inStage(stage, dest);
          cpSync(origin, target, { recursive: true });
        }
        break;
      }
      case 'RUN':
        execFileSync('sh', ['-c', args], {
          cwd: inStage(stage, '.'),
          env: {
            PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
            HOME: process.env.HOME ?? temp,
            npm_config_prefer_offline: 'true',
            ...stage.env,
          },
          stdio: 'pipe',
        });
        break;
      case 'USER':
        stage.user = args;
        break;
      case 'ENTRYPOINT':
        stage.entrypoint = JSON.parse(args) as string[];
        break;
      case 'CMD':
        stage.cmd = JSON.parse(args) as string[];
        break;
      case 'HEALTHCHECK':
        stage.healthcheck = JSON.parse(args.slice(args.indexOf('CMD') + 3).trim()) as string[];
        break;
      case 'EXPOSE':
        break;
      default:
        throw new Error(`Dockerfile: an instruction this test does not follow: ${instruction}`);
    }
  }
  return stages.at(-1) as Stage;
}

let image: Stage;
/** The base image's Node: this test's own, copied in (its folder may be closed to the image's user). */
let imageNode: string;
let mount: string;
let ports: { listen: number; admin: number };

/** Runs `argv` in the image as its USER (when this test may switch users), with `env`. */
function inImage(argv: string[], env: Record<string, string>) {
  const [uid, gid] = (image.user ?? '').split(':').map(Number);
  const asUser = process.getuid?.() === 0 && uid !== undefined && !Number.isNaN(uid);
  const [command, ...args] = argv as [string, ...string[]];
  return spawn(command === 'node' ? imageNode : command, args, {
    cwd: join(image.root, image.workdir),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...image.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(asUser ? { uid, gid: gid ?? uid } : {}),
  });
}

function finished(
  child: ReturnType<typeof spawn>,
): Promise<{ code: number | null; output: string }> {
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, output })));
}

/** Resolves once `child` has printed `text` (stdout or stderr); rejects if it exits first. */
function printed(child: ReturnType<typeof spawn>, text: string): Promise<void> {
  let output = '';
  return new Promise((resolve, reject) => {
    const seen = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(text)) resolve();
    };
    child.stdout?.on('data', seen);
    child.stderr?.on('data', seen);
    child.once('close', (code) =>
      reject(new Error(`exited (${code}) before "${text}":\n${output}`)),
    );
  });
}

beforeAll(async () => {
  image = followDockerfile(buildContext());
  imageNode = join(image.root, 'usr/local/bin/node');
  mkdirSync(dirname(imageNode), { recursive: true });
  cpSync(process.execPath, imageNode);
  // The image's user must read it, as in the container (mkdtemp makes 0700
  // folders): readable here, and the folders above it passable (not listable).
  execFileSync('chmod', ['-R', 'a+rX', temp]);
  for (let dir = dirname(temp); dir !== dirname(dir); dir = dirname(dir)) {
    const mode = statSync(dir).mode & 0o777;
    if ((mode & 0o001) === 0) chmodSync(dir, mode | 0o001);
  }
  mount = join(temp, 'etc-tenant-gateway');
  mkdirSync(join(mount, 'keys'), { recursive: true });
  const { privateKey } = generateKeyPairSync('ed25519');
  writeFileSync(join(mount, 'keys', 'k1.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
  ports = { listen: await findFreePort(), admin: await findFreePort() };
  writeFileSync(
    join(mount, 'gateway.yaml'),
    [
      `listen: { host: 0.0.0.0, port: ${ports.listen} }`,
      `admin: { host: 0.0.0.0, port: ${ports.admin} }`,
      `tokens: { keys: ${join(mount, 'keys')} }`,
    ].join('\n'),
  );
  execFileSync('chmod', ['-R', 'a+rX', mount]);
}, 240_000);

describe('the Dockerfile, followed step by step', () => {
  it("yields an image of the build output, production dependencies, Envoy's protos and the production example config only", () => {
    const app = join(image.root, image.workdir);
    expect(readdirSync(app).sort()).toEqual([
      'config',
      'dist',
      'node_modules',
      'package.json',
      'proto',
    ]);
    expect(existsSync(join(app, 'dist', 'console', 'manifest.json'))).toBe(true);
    expect(
      existsSync(join(app, 'proto', 'envoy', 'service', 'auth', 'v3', 'external_auth.proto')),
    ).toBe(true);
    expect(readdirSync(join(app, 'config'))).toEqual(['production.yaml']);
    expect(existsSync(join(app, 'node_modules', 'vitest'))).toBe(false);
    expect(existsSync(join(app, 'node_modules', 'undici'))).toBe(true);
    expect(image.env.NODE_ENV).toBe('production');
  });

  it('without a mounted config it refuses to start, naming the missing file', async () => {
    const run = await finished(
      inImage([...(image.entrypoint ?? []), ...(image.cmd ?? [])], {
        GATEWAY_CONFIG: join(temp, 'not-mounted', 'gateway.yaml'),
      }),
    );
    expect(run.code).toBe(1);
    expect(run.output).toContain('not-mounted/gateway.yaml');
    expect(run.output).toContain('cannot read the file: ENOENT');
  });

  it('with one it serves, and its HEALTHCHECK command says healthy', async () => {
    const env = { GATEWAY_CONFIG: join(mount, 'gateway.yaml') };
    const gateway = inImage([...(image.entrypoint ?? []), ...(image.cmd ?? [])], env);
    const stopped = finished(gateway);
    try {
      // Asked once the gateway says it listens, as Docker's first probe after
      // the start period: polling from the start ran a node process (~0.5 s
      // of CPU) every 200 ms, competing with the start it waited for.
      await printed(gateway, 'listening');
      let health = { code: null as number | null, output: '' };
      for (let i = 0; i < 50 && health.code !== 0; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, 200));
        health = await finished(inImage(image.healthcheck ?? [], env));
      }
      expect(health).toEqual({
        code: 0,
        output: `ok: http://127.0.0.1:${ports.admin}/healthz\n`,
      });
      const jwks = await fetch(`http://127.0.0.1:${ports.listen}/.well-known/jwks.json`);
      expect(((await jwks.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid)).toEqual([
        'k1',
      ]);
    } finally {
      gateway.kill('SIGTERM');
    }
    expect((await stopped).code).toBe(0);
  });
});
