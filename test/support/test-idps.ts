/**
 * The HTTPS OIDC providers of a suite about tenants' identity providers
 * (issue 34): one test CA and a provider per name, each with its clients, its
 * accounts and its ID tokens' algorithm. Call it in a suite or a describe
 * block: the CA and the providers start in its `beforeAll`, before the hooks
 * registered after the call, and stop in its `afterAll`, after them.
 */
import { afterAll, beforeAll } from 'vitest';
import {
  makeTestCa,
  startTestIdp,
  type IdpAccount,
  type TestCa,
  type TestIdp,
  type TestIdpOptions,
} from './oidc-idp.js';

/** A provider's options but the CA; an account given as an e-mail is one the IdP has verified. */
export type IdpSpec = Omit<TestIdpOptions, 'ca' | 'accounts'> & {
  accounts?: Record<string, string | IdpAccount>;
};

export type TestIdps<N extends string> = { ca: TestCa } & Record<N, TestIdp>;

export function useTestIdps<N extends string>(specs: Record<N, IdpSpec>): TestIdps<N> {
  const idps = {} as TestIdps<N>;
  const started = idps as Record<N, TestIdp>;
  beforeAll(async () => {
    idps.ca = makeTestCa();
    for (const [name, spec] of Object.entries(specs) as [N, IdpSpec][]) {
      const accounts = Object.fromEntries(
        Object.entries(spec.accounts ?? {}).map(([id, account]) => [
          id,
          typeof account === 'string' ? { email: account, emailVerified: true } : account,
        ]),
      );
      started[name] = await startTestIdp({ ...spec, ca: idps.ca, accounts });
    }
  }, 60_000);
  afterAll(async () => {
    for (const name of Object.keys(specs) as N[]) await started[name]?.close();
    idps.ca?.close();
  });
  return idps;
}

/**
 * The `sso` settings of a gateway whose tenants' providers are test IdPs:
 * sign-in on, the test CA trusted, issuers on loopback allowed (the providers
 * listen on 127.0.0.1); `extra` is merged over them.
 */
export function loopbackSso(
  ca: TestCa,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { enabled: true, ca: ca.caFile, allowPrivateIssuers: true, ...extra };
}
