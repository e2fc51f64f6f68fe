/**
 * A real Prometheus (Debian's `prometheus` package) for tests: started on a
 * free loopback port with its own storage in a temp folder, scraping the
 * given targets every second, and queried through its HTTP API exactly as
 * Grafana queries it. `promtool` comes with the same package.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { findExecutable, onPath } from './executables.js';
import { findFreePort } from './ports.js';

/** promtool, or a loud failure: CI installs the package, nothing is skipped. */
export function promtoolBinary(): string {
  return required('promtool');
}

function required(name: string): string {
  const binary = findExecutable([...onPath(name), `/usr/bin/${name}`]);
  if (binary === undefined) {
    throw new Error(`${name} not found: apt-get install prometheus (CI installs it)`);
  }
  return binary;
}

/** One series of an instant query's answer. */
export interface QuerySample {
  metric: Record<string, string>;
  value: number;
}

export interface TestPrometheus {
  url: string;
  /** An instant query; throws with Prometheus's own error for a query it refuses. */
  query(expr: string): Promise<QuerySample[]>;
  /** Resolves once every target has been scraped successfully `times` times since the call. */
  scrapes(times: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts Prometheus scraping `targets` (`host:port`, path `/metrics`) as job `job`. */
export async function startPrometheus(job: string, targets: string[]): Promise<TestPrometheus> {
  const binary = required('prometheus');
  const dir = mkdtempSync(join(tmpdir(), 'tg-prometheus-'));
  const configFile = join(dir, 'prometheus.yml');
  writeFileSync(
    configFile,
    JSON.stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      scrape_configs: [{ job_name: job, static_configs: [{ targets }] }],
    }),
  );
  const port = await findFreePort();
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };

  const api = async (path: string): Promise<unknown> => {
    const res = await fetch(`${url}${path}`);
    const body = (await res.json()) as { status: string; data?: unknown; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error}`);
    return body.data;
  };
  const query = async (expr: string): Promise<QuerySample[]> => {
    const data = (await api(`/api/v1/query?query=${encodeURIComponent(expr)}`)) as {
      resultType: string;
      result: { metric: Record<string, string>; value: [number, string] }[] | [number, string];
    };
    if (data.resultType === 'scalar') {
      const [, value] = data.result as [number, string];
      return [{ metric: {}, value: Number(value) }];
    }
    return (data.result as { metric: Record<string, string>; value: [number, string] }[]).map(
      (r) => ({ metric: r.metric, value: Number(r.value[1]) }),
    );
  };

  try {
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`prometheus exited:\n${stderr}`);
      const ready = await fetch(`${url}/-/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      if (Date.now() > deadline) throw new Error(`prometheus not ready in 20 s:\n${stderr}`);
      await delay(100);
    }
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    url,
    query,
    async scrapes(times) {
      const seen = async () => {
        const data = (await api('/api/v1/targets')) as {
          activeTargets: { health: string; lastScrape: string; lastError: string }[];
        };
        return data.activeTargets;
      };
      const start = Date.now();
      let count = 0;
      let last = '';
      const deadline = start + 30_000 + times * 2_000;
      while (count < times) {
        if (Date.now() > deadline) throw new Error(`no ${times} scrapes in time:\n${stderr}`);
        const targets = await seen();
        const bad = targets.find((t) => t.health === 'down');
        if (bad !== undefined) throw new Error(`scrape failed: ${bad.lastError}`);
        const newest = targets.map((t) => t.lastScrape).sort()[0] ?? '';
        if (
          targets.every((t) => t.health === 'up' && Date.parse(t.lastScrape) > start) &&
          newest !== last
        ) {
          last = newest;
          count++;
        }
        await delay(250);
      }
    },
    stop,
  };
}
