/**
 * The C peers of issue 13's rows: nginx as a plain keep-alive reverse proxy
 * (one worker), and HAProxy doing what the gateway does per request — verify
 * the bearer token (`jwt_verify`, ES256, on every request: HAProxy has no
 * verdict cache), check `iss`/`aud`/`exp`, refuse a tenant header other than
 * the token's `tenant_id`, replace the identity headers with the token's
 * claims — on one thread. Each runs from a config generated into a temp
 * directory of its own, every path it writes inside it, in the foreground as
 * a child of the benchmark. A peer whose binary is missing is skipped, said so.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { TOKEN_AUDIENCE, TOKEN_ISSUER } from './gateway-config.js';
import { childPids } from './cpu-usage.js';
import { spawnProcess, waitForPort, type BenchProcess } from './processes.js';

/** A peer proxy, as the benchmark starts it. */
export interface Peer {
  name: string;
  /** Its program, found on PATH or in the sbin directories; undefined: not installed. */
  binary: string | undefined;
  /** What to print when it is skipped. */
  missing: string;
  /** The first line of `binary -v` (for the report: which build ran). */
  version(): string;
  /** Starts it on `port` in front of `upstreamUrl`; the temp directory goes with `stop()`. */
  start(port: number, upstreamUrl: string): Promise<BenchProcess>;
}

/** Where Debian puts nginx and haproxy: sbin, often not on a non-root PATH. */
const EXTRA_PATH = ['/usr/sbin', '/usr/local/sbin', '/sbin'];

function findBinary(name: string): string | undefined {
  const dirs = [...(process.env['PATH'] ?? '').split(delimiter), ...EXTRA_PATH];
  for (const dir of dirs) {
    if (dir === '') continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The first line `binary -v` prints (nginx on stderr, HAProxy on stdout). */
function versionOf(binary: string | undefined): string {
  if (binary === undefined) return 'not installed';
  const out = spawnSync(binary, ['-v'], { encoding: 'utf8', timeout: 5_000 });
  return `${out.stdout ?? ''}${out.stderr ?? ''}`.trim().split('\n', 1)[0] ?? '';
}

/** Runs `binary args` from a fresh temp dir (removed on stop) and waits for `port`. */
async function startInTempDir(
  name: string,
  binary: string,
  port: number,
  write: (dir: string) => string[],
): Promise<BenchProcess> {
  const dir = mkdtempSync(join(tmpdir(), `tg-bench-${name.replace(/\W+/g, '-')}-`));
  const proc = spawnProcess(name, binary, write(dir), dir);
  const stop = async () => {
    await proc.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForPort(proc, port);
  } catch (err) {
    await stop();
    throw err;
  }
  // nginx's worker outlives a SIGKILLed master: should the benchmark die
  // without its teardown (processes.ts then SIGKILLs its children), the
  // worker goes too. A clean stop (SIGTERM to the master) takes it along.
  const workers = childPids(proc.pid);
  const killWorkers = () => {
    for (const pid of workers) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  process.on('exit', killWorkers);
  return {
    ...proc,
    async stop() {
      await stop();
      process.off('exit', killWorkers);
    },
  };
}

/** nginx, keep-alive both sides, one worker, no logging (as the Node proxies: none). */
export function nginxPeer(): Peer {
  const binary = findBinary('nginx');
  return {
    name: 'nginx',
    binary,
    missing: 'nginx: not installed, row skipped (Debian: apt-get install nginx-light)',
    version: () => versionOf(binary),
    start: (port, upstreamUrl) =>
      startInTempDir('nginx', binary as string, port, (dir) => {
        const upstream = new URL(upstreamUrl).host;
        // Every path nginx writes is inside `dir` (`-p`, `-e` for the log
        // before the config is read); keepalive_requests lifted on both sides,
        // or every 1,000 requests would reopen a connection.
        const conf = `worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream bench_upstream {
    server ${upstream};
    keepalive 64;
    keepalive_requests 10000000;
  }
  server {
    listen 127.0.0.1:${port};
    keepalive_requests 10000000;
    location / {
      proxy_pass http://bench_upstream;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
    }
  }
}
`;
        writeFileSync(join(dir, 'nginx.conf'), conf);
        return ['-p', dir, '-e', join(dir, 'error.log'), '-c', 'nginx.conf', '-g', 'daemon off;'];
      }),
  };
}

/** Identity-like headers a client may not send through (the gateway strips these by default too). */
const STRIPPED = [
  'x-tenant-type',
  'x-user-id',
  'x-user-email',
  'x-forwarded-user',
  'x-forwarded-email',
  'remote-user',
];

/**
 * HAProxy with `jwt_verify`: the gateway's per-request checks in HAProxy's
 * own terms. Token: `alg` must be ES256, signature verified against the
 * gateway's public key, `iss` and `aud` equal, `exp` not passed; else 401.
 * A request naming a tenant (X-Tenant-Id) must name the token's; else 403.
 * Then the identity headers are replaced by the token's claims and
 * X-Request-Id is passed or made, X-Forwarded-For set; upstream connections
 * are reused (`http-reuse always`).
 */
export function haproxyPeer(publicKeyFile: string): Peer {
  const binary = findBinary('haproxy');
  return {
    name: 'haproxy',
    binary,
    missing: 'haproxy: not installed, row skipped (Debian: apt-get install haproxy)',
    version: () => versionOf(binary),
    start: (port, upstreamUrl) =>
      startInTempDir('haproxy', binary as string, port, (dir) => {
        const upstream = new URL(upstreamUrl).host;
        const claim = (name: string, type = '') =>
          `var(txn.bearer),jwt_payload_query('$.${name}'${type === '' ? '' : `,'${type}'`})`;
        const conf = `global
  nbthread 1
  maxconn 4096
  pidfile ${dir}/haproxy.pid

defaults
  mode http
  option http-keep-alive
  option forwardfor
  http-reuse always
  timeout connect 5s
  timeout client 60s
  timeout server 60s
  timeout http-keep-alive 60s

frontend bench
  bind 127.0.0.1:${port}
  unique-id-format %{+X}o%ci%cp%fp%Ts%rt%pid
  http-request set-var(txn.bearer) http_auth_bearer
  http-request set-var(txn.alg) var(txn.bearer),jwt_header_query('$.alg')
  http-request deny status 401 unless { var(txn.alg) -m str ES256 }
  http-request deny status 401 unless { var(txn.bearer),jwt_verify(txn.alg,"${publicKeyFile}") -m int 1 }
  http-request set-var(txn.iss) ${claim('iss')}
  http-request set-var(txn.aud) ${claim('aud')}
  http-request set-var(txn.exp) ${claim('exp', 'int')}
  http-request set-var(txn.now) date
  http-request deny status 401 unless { var(txn.iss) -m str ${TOKEN_ISSUER} }
  http-request deny status 401 unless { var(txn.aud) -m str ${TOKEN_AUDIENCE} }
  http-request deny status 401 unless { var(txn.exp),sub(txn.now) -m int gt 0 }
  http-request set-var(txn.tenant_id) ${claim('tenant_id')}
  http-request deny status 403 if { req.hdr_cnt(x-tenant-id) gt 1 }
  http-request deny status 403 if { req.hdr_cnt(x-tenant-id) eq 1 } !{ req.hdr(x-tenant-id),strcmp(txn.tenant_id) eq 0 }
${STRIPPED.map((name) => `  http-request del-header ${name}`).join('\n')}
  http-request set-header X-Tenant-Id %[var(txn.tenant_id)]
  http-request set-header X-Tenant-Type %[${claim('tenant_type')}]
  http-request set-header X-User-Id %[${claim('sub')}]
  http-request set-header X-User-Email %[${claim('email')}]
  http-request set-header X-Request-Id %[unique-id] unless { req.hdr(x-request-id) -m found }
  default_backend upstream

backend upstream
  server upstream ${upstream} maxconn 512
`;
        writeFileSync(join(dir, 'haproxy.cfg'), conf);
        // -db: foreground, one process (no master): its pid is the one measured.
        return ['-db', '-f', join(dir, 'haproxy.cfg')];
      }),
  };
}
