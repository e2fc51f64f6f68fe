/** The running world the scenarios drive: the processes `npm run bench` started. */
import type { LoadTarget } from './load.js';
import type { BenchProcess } from './processes.js';
import type { TargetKey } from './targets.js';

/** The running world the scenarios drive. */
export interface BenchWorld {
  settings: {
    connections: number;
    warmupSeconds: number;
    seconds: number;
    rounds: number;
    /** Scenario 1 is measured on this many fresh sets of proxy processes. */
    processes: number;
  };
  redisPort: number;
  /** The gateway's config file (the CLI's `client add` runs on it). */
  configFile: string;
  /** Scenario 1's targets that run here (TARGETS order), each with its base URL. */
  targets: { key: TargetKey; name: string; url: string }[];
  /** Targets that do not run here, with the reason. */
  skipped: string[];
  /** The versions of the peers that run (`nginx -v`, `haproxy -v`). */
  peers: string[];
  /** The bare http-proxy-3 proxy (scenario 1b's baseline). */
  bareUrl: string;
  gatewayUrl: string;
  /** The current gateway process (the soak restarts it). */
  gateway(): BenchProcess;
  /** The current pid of the server answering a target (`direct`: the upstream). */
  pid(server: TargetKey): number;
  /** Pids of every process the benchmark started, for the others'-CPU figure. */
  pids(): number[];
  /** Proxied GETs through the gateway, with a fresh token. */
  proxiedTarget(): Promise<LoadTarget>;
  restartGateway(): Promise<void>;
  /** A fresh set of proxy processes (all but the upstream), on the same ports. */
  restartProxies(): Promise<void>;
  progress(message: string): void;
}
