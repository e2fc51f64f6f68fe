/**
 * The set-up most proxy and ops suites share, registered as the suite's
 * `beforeAll`/`afterAll`: upstreams started side by side, the memory identity
 * fixture routed to them, and, when asked, a second gateway on the fixture's
 * config whose log lines are captured, and Alice's token for acme from the
 * gateway the suite talks to. The handle is filled in by `beforeAll`; read
 * its fields inside hooks and tests.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll } from 'vitest';
import { startTestGateway, type TestGateway } from './gateway.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from './identity-fixture.js';
import type { Line } from './log-sink.js';

interface Closable {
  close(): Promise<void>;
}

/** Starters of the suite's upstreams, by the name the config and the tests use. */
type Starters = Record<string, () => Promise<Closable>>;
type Started<S extends Starters> = { [K in keyof S]: Awaited<ReturnType<S[K]>> };

export interface FixtureSuite<U, F extends IdentityFixture = IdentityFixture> {
  fx: F;
  /** The gateway the suite talks to: `fx.gw`, or with `logged` the one whose lines are in `lines`. */
  gw: TestGateway;
  up: U;
  /** The log lines of `gw` (with `logged`; empty otherwise), parsed (`{ unparsed }` if not JSON)… */
  lines: Line[];
  /** …and as written. */
  text: string;
  /** Where `gw` logs (with `logged`): another gateway of the suite may log there too. */
  logTo: Writable;
  /** Alice's access token for acme, from `gw` (with `token`), and the whole answer. */
  token: string;
  grant: Record<string, unknown>;
}

export interface FixtureSuiteOptions<F extends IdentityFixture = IdentityFixture> {
  /** Starts the fixture from the suite's config (default: `startMemoryIdentityFixture`). */
  start?: (overrides: Record<string, unknown>) => Promise<F>;
  /**
   * Start a second gateway on `fx.config` (and these keys, if given) with its
   * log captured, and talk to it.
   */
  logged?: boolean | Record<string, unknown>;
  /** Take Alice's token for acme from the suite's gateway. */
  token?: boolean;
}

/**
 * The suite on the fixture `options.start` starts: by default the memory
 * one; a `x.redis.test.ts` passes `(c) => startIdentityFixture(c)` (see
 * docs/architecture.md § Tests).
 */
export function fixtureSuite<S extends Starters, F extends IdentityFixture = IdentityFixture>(
  starters: S,
  config: (up: Started<S>) => Record<string, unknown>,
  options: FixtureSuiteOptions<F> = {},
): FixtureSuite<Started<S>, F> {
  const start = options.start ?? (startMemoryIdentityFixture as (o: object) => Promise<F>);
  return suiteOn(start, starters, config, options);
}

function suiteOn<S extends Starters, F extends IdentityFixture>(
  startFixture: (overrides: Record<string, unknown>) => Promise<F>,
  starters: S,
  config: (up: Started<S>) => Record<string, unknown>,
  options: FixtureSuiteOptions<F>,
): FixtureSuite<Started<S>, F> {
  const suite = { lines: [] as Line[], text: '' } as FixtureSuite<Started<S>, F>;
  const closing: Closable[] = [];
  beforeAll(async () => {
    const names = Object.keys(starters);
    const started = await Promise.all(
      names.map((name) => (starters[name] as () => Promise<Closable>)()),
    );
    closing.push(...started);
    suite.up = Object.fromEntries(names.map((name, i) => [name, started[i]])) as Started<S>;
    suite.fx = await startFixture(config(suite.up));
    closing.unshift(suite.fx);
    suite.gw = suite.fx.gw;
    if (options.logged !== undefined && options.logged !== false) {
      const extra = options.logged === true ? {} : options.logged;
      suite.logTo = capture(suite);
      suite.gw = await startTestGateway({ ...suite.fx.config, ...extra }, { logTo: suite.logTo });
      closing.unshift(suite.gw);
    }
    if (options.token === true) {
      suite.grant = await tokenFor(suite.gw.url, ALICE, 'acme');
      suite.token = suite.grant.access_token as string;
    }
  });
  afterAll(async () => {
    // The gateways first, then the upstreams they forward to.
    for (const part of closing.splice(0)) await part.close();
  });
  return suite;
}

/** A destination for the gateway's log that keeps its text and its lines in `suite`. */
function capture(suite: { lines: Line[]; text: string }): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      const text = chunk.toString('utf8');
      suite.text += text;
      for (const line of text.split('\n')) {
        if (line.trim() === '') continue;
        try {
          suite.lines.push(JSON.parse(line) as Line);
        } catch {
          suite.lines.push({ unparsed: line });
        }
      }
      done();
    },
  });
}
