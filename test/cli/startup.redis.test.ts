/**
 * What a store command loads: the config, the store and the auth code, never
 * the serving path. `serve` alone imports the gateway (Koa, the proxy and
 * undici, prom-client, OpenTelemetry), which was most of every other
 * command's start-up (docs/architecture.md, "A CLI verb").
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startCliHarness, type CliHarness } from './harness.js';

const HOOK = resolve(import.meta.dirname, '../support/loaded-modules.mjs');
/** Packages and modules of the serving path. */
const SERVING =
  /\/node_modules\/(koa|@koa|@opentelemetry|prom-client|undici|ws)\/|\/dist\/(gateway|dispatch|api\/app|cli\/serve)\.js$|\/dist\/(gateway\/|proxy|ops\/(metrics|tracing))/;

let h: CliHarness;

beforeAll(async () => {
  h = await startCliHarness();
});

afterAll(async () => {
  await h?.stop();
});

it('a store command loads none of the serving path', async () => {
  const kase = h.newCase();
  await h.addKey(kase);
  const list = join(kase.dir, 'loaded-modules.txt');
  const env = { NODE_OPTIONS: `--import=${HOOK}`, TG_LOADED_MODULES: list };
  expect(await h.ok(['user', 'list', ...kase.c], { env })).toEqual([]);
  const loaded = readFileSync(list, 'utf8').split('\n');
  // The record is whole: the core the command ran on is in it.
  expect(loaded.filter((url) => /\/dist\/(core|cli\/admin)\.js$/.test(url))).toHaveLength(2);
  expect(loaded.filter((url) => SERVING.test(url))).toEqual([]);
});
