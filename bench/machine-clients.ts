/**
 * Issue 32's rows: what a machine client costs on the proxy path against a
 * user, and what its token costs at the token endpoint against a Basic
 * login. The same tenant-header route, the same request but for its
 * credential — a user's token, a client-credentials token, an API key (when
 * this build takes keys on the request path) — measured on one gateway
 * process in interleaved rounds, on several fresh processes; then the
 * client-credentials grant alone, as many connections as the login storm's.
 */
import { execFileSync } from 'node:child_process';
import { configSchema } from '../src/config/schema.js';
import { BENCH_TENANT, fetchToken, REQUEST_PATH } from './gateway-config.js';
import { drive, summarize, type LoadResult, type LoadTarget } from './load.js';
import { PROJECT_ROOT } from './processes.js';
import { commandsBetween, readCommandCounts } from './redis-stats.js';
import { spread, type Spread } from './spread.js';
import type { BenchWorld } from './world.js';
import { Tally } from './tally.js';

/** The credentials a row sends, by the principal kind they prove. */
export const PRINCIPAL_ROWS = [
  { key: 'user', name: 'user token (Basic login)' },
  { key: 'client', name: 'client-credentials token' },
  { key: 'apiKey', name: 'API key (Authorization: Bearer tgk_…)' },
] as const;

export type PrincipalRow = (typeof PRINCIPAL_ROWS)[number]['key'];

/** One row's figures: the load, and the store commands it caused. */
export interface PrincipalRun {
  load: LoadResult;
  /** Counted Redis commands during the runs (redis-stats.ts's exclusions apply). */
  commands: number;
  /** The same, by command. */
  byCommand: Record<string, number>;
  redisPerRequest: number;
}

/** Scenario 4: issue 32's rows. */
export interface MachineClientScenario {
  /** Each row per fresh gateway process. */
  processes: Partial<Record<PrincipalRow, PrincipalRun>>[];
  /** Why the API key row did not run; undefined when it did. */
  apiKeySkipped?: string;
  /** `POST /1/oauth/token` (client_secret_post), alone. */
  grant: PrincipalRun;
}

/**
 * Whether this build takes API keys on the request path: `apiKeys` joins
 * the config schema when it does (`src/config/schema/authorization.ts`).
 */
export function buildTakesApiKeys(): boolean {
  return 'apiKeys' in configSchema.shape;
}

/** A machine client of the bench tenant, and its API key when the build takes keys. */
interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  apiKey: string | undefined;
}

/** Runs the built CLI on the gateway's config and parses the JSON it prints. */
function cli<T>(configFile: string, args: string[]): T {
  const out = execFileSync(process.execPath, ['dist/cli.js', ...args, '--config', configFile], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The answer is pretty-printed JSON: from a line `{` to a line `}` (log lines are one-line objects).
  const lines = out.split('\n');
  const start = lines.indexOf('{');
  const end = lines.indexOf('}', start);
  if (start < 0 || end < 0)
    throw new Error(`tenant-gateway ${args.join(' ')}: no answer in\n${out}`);
  return JSON.parse(lines.slice(start, end + 1).join('\n')) as T;
}

/** `client add` (and `client key add`), as an operator makes them. */
function makeClient(configFile: string, withKey: boolean): ClientCredentials {
  const client = cli<{ client_id: string; client_secret: string }>(configFile, [
    'client',
    'add',
    '--tenant',
    BENCH_TENANT,
    '--name',
    'bench-client',
    '--scopes',
    'orders:read',
  ]);
  const key = withKey
    ? cli<{ api_key: string }>(configFile, ['client', 'key', 'add', client.client_id]).api_key
    : undefined;
  return { clientId: client.client_id, clientSecret: client.client_secret, apiKey: key };
}

/** The grant's form: `client_secret_post` (RFC 6749 §2.3.1). */
function grantForm(client: ClientCredentials): string {
  return new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: client.clientId,
    client_secret: client.clientSecret,
  }).toString();
}

/** A client-credentials token, or a throw. */
async function fetchClientToken(gatewayUrl: string, client: ClientCredentials): Promise<string> {
  const res = await fetch(`${gatewayUrl}/1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: grantForm(client),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`POST /1/oauth/token: ${res.status} ${text}`);
  return (JSON.parse(text) as { access_token: string }).access_token;
}

/** Each row's bearer for the current gateway process. */
async function bearers(
  world: BenchWorld,
  client: ClientCredentials,
): Promise<Partial<Record<PrincipalRow, string>>> {
  const user = await fetchToken(world.gatewayUrl);
  const token = await fetchClientToken(world.gatewayUrl, client);
  return {
    user,
    client: token,
    ...(client.apiKey === undefined ? {} : { apiKey: client.apiKey }),
  };
}

/** A tally that also counts the Redis commands its runs caused. */
class CountedTally {
  readonly tally: Tally;
  commands = 0;
  readonly byCommand = new Map<string, number>();

  constructor(
    name: string,
    private readonly world: BenchWorld,
  ) {
    this.tally = new Tally(name, () => world.pid('gateway'), world.pids);
  }

  async add(target: LoadTarget, seconds: number): Promise<void> {
    const before = await readCommandCounts(this.world.redisPort);
    await this.tally.add(() => drive(target, { seconds }));
    const delta = commandsBetween(before, await readCommandCounts(this.world.redisPort));
    this.commands += delta.total;
    for (const [command, n] of delta.counted)
      this.byCommand.set(command, (this.byCommand.get(command) ?? 0) + n);
  }

  result(): PrincipalRun {
    const load = this.tally.result();
    return {
      load,
      commands: this.commands,
      byCommand: Object.fromEntries(this.byCommand),
      redisPerRequest: this.commands / Math.max(1, load.completed),
    };
  }
}

/**
 * Scenario 4. Each of `processes` sets restarts the gateway, warms every row
 * up, then measures them in `rounds` interleaved slices, so the rows of a
 * set share the process and the machine's moods; then the grant alone.
 */
export async function machineClientScenario(
  world: BenchWorld,
  grantConnections: number,
): Promise<{ scenario: MachineClientScenario; warmups: LoadResult[] }> {
  const { connections, seconds, rounds, processes, warmupSeconds } = world.settings;
  const takesKeys = buildTakesApiKeys();
  world.progress(`machine clients: client add${takesKeys ? ', client key add' : ''}`);
  const client = makeClient(world.configFile, takesKeys);
  const rows = PRINCIPAL_ROWS.filter(({ key }) => key !== 'apiKey' || takesKeys);
  const warmups: LoadResult[] = [];
  const sets: MachineClientScenario['processes'] = [];

  for (let set = 1; set <= processes; set++) {
    world.progress(`machine clients, process set ${set}/${processes}: restarting the gateway`);
    await world.restartGateway();
    const credentials = await bearers(world, client);
    const loads = rows.map(({ key, name }) => ({
      key,
      counted: new CountedTally(name, world),
      target: {
        name,
        url: world.gatewayUrl + REQUEST_PATH,
        connections,
        headers: { authorization: `Bearer ${credentials[key]}`, 'x-tenant-id': BENCH_TENANT },
      },
    }));
    for (const { target } of loads) {
      world.progress(`${target.name}: warm-up ${warmupSeconds} s`);
      warmups.push(
        summarize(`${target.name} (warm-up)`, [await drive(target, { seconds: warmupSeconds })]),
      );
    }
    for (let round = 1; round <= rounds; round++) {
      world.progress(`machine clients, set ${set}/${processes}, round ${round}/${rounds}`);
      for (const { counted, target } of loads) await counted.add(target, seconds / rounds);
    }
    sets.push(Object.fromEntries(loads.map(({ key, counted }) => [key, counted.result()])));
  }

  const grant: LoadTarget = {
    name: 'POST /1/oauth/token (client credentials), alone',
    url: `${world.gatewayUrl}/1/oauth/token`,
    connections: grantConnections,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: grantForm(client),
  };
  world.progress(`${grant.name}: warm-up ${warmupSeconds} s, then ${seconds} s measured`);
  warmups.push(
    summarize(`${grant.name} (warm-up)`, [await drive(grant, { seconds: warmupSeconds })]),
  );
  const granted = new CountedTally(grant.name, world);
  await granted.add(grant, seconds);

  return {
    scenario: {
      processes: sets,
      ...(takesKeys
        ? {}
        : {
            apiKeySkipped:
              'this build does not take API keys on the request path (no `apiKeys` in its config)',
          }),
      grant: granted.result(),
    },
    warmups,
  };
}

/** `pick` of row `key` in every set where it ran. */
export function rowSpread(
  s: MachineClientScenario,
  key: PrincipalRow,
  pick: (run: PrincipalRun) => number | undefined,
): Spread {
  return spread(
    s.processes.map((set) => {
      const run = set[key];
      return run === undefined ? Number.NaN : (pick(run) ?? Number.NaN);
    }),
  );
}

/** Row `key`'s Redis commands per request over every set. */
export function redisPerRequest(s: MachineClientScenario, key: PrincipalRow): number {
  let commands = 0;
  let requests = 0;
  for (const set of s.processes) {
    commands += set[key]?.commands ?? 0;
    requests += set[key]?.load.completed ?? 0;
  }
  return requests === 0 ? Number.NaN : commands / requests;
}

/** Row `a`'s server CPU per request over the user token's, set by set. */
export function cpuOverUser(s: MachineClientScenario, a: PrincipalRow): Spread {
  return spread(
    s.processes.map(
      (set) =>
        (set[a]?.load.serverCpuUsPerRequest ?? Number.NaN) /
        (set.user?.load.serverCpuUsPerRequest ?? Number.NaN),
    ),
  );
}
