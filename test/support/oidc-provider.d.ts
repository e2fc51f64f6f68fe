/**
 * The part of `oidc-provider` (v9 ships no types) the test IdP uses
 * (`oidc-idp.ts`); see its docs/README.md for the configuration.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface Grant {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }

  interface ProviderContext {
    oidc: {
      session?: { accountId?: string };
      client?: { clientId: string };
      provider: Provider;
    };
  }

  interface Account {
    accountId: string;
    claims(): Promise<Record<string, unknown>>;
  }

  interface Configuration {
    clients?: Record<string, unknown>[];
    jwks?: { keys: Record<string, unknown>[] };
    cookies?: { keys: string[] };
    claims?: Record<string, string[]>;
    conformIdTokenClaims?: boolean;
    features?: Record<string, { enabled: boolean }>;
    ttl?: Record<string, number>;
    findAccount?: (ctx: ProviderContext, sub: string) => Promise<Account | undefined>;
    loadExistingGrant?: (ctx: ProviderContext) => Promise<Grant | undefined>;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    Grant: new (init: { clientId: string; accountId: string }) => Grant;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
