/**
 * What a grant of `POST /1/oauth/token` is (issue 43, after oidc-provider's
 * `lib/actions/grants/`): its `grant_type`, whether this gateway serves it,
 * the form parameters it reads and its handler. Each grant is one file
 * exporting one of these (`oauth-*-grant.ts`); `grants.ts` lists them.
 */
import type { ApiContext } from '../state.js';
import type { IdentityRouterDeps } from './deps.js';

/** The config keys that decide which grants a gateway serves (a `GatewayConfig` is one). */
export interface GrantsConfig {
  tokens: { refresh: { enabled: boolean } };
  sso: { enabled: boolean };
}

export interface Grant {
  /** Its `grant_type`. */
  type: string;
  /** Whether a gateway with `config` serves it. */
  enabled(config: GrantsConfig): boolean;
  /** The form parameters it reads besides `grant_type`. */
  params: readonly string[];
  /**
   * Reads the form, issues the token through `identity/issued.ts` and writes
   * the answer, or throws a `GatewayError`.
   */
  handle(deps: IdentityRouterDeps, ctx: ApiContext, form: URLSearchParams): Promise<void>;
}

/** A grant enabled by the config whose part was not built: a wiring fault, never a client's. */
export function notBuilt(grant: string, part: string): Error {
  return new Error(`${grant} is enabled, but the gateway was built without ${part}`);
}
