/**
 * `tenant idp set|show|remove`: an org tenant's identity provider (issue 34),
 * checked and stored by the operations the API calls too (`identity/idps.ts`),
 * the operator as actor. The client secret comes from stdin
 * (`--client-secret-stdin`) or `GATEWAY_IDP_CLIENT_SECRET`, never from argv;
 * it is sealed with `sso.secretsKeyFile` before it is stored, and nothing
 * prints it.
 */
import { idpView } from '../api/representations.js';
import { checkIdpSettings, type IdpSettings } from '../auth/federation/tenant-idps.js';
import type { LoadedConfig } from '../config/index.js';
import { isGatewayError } from '../errors.js';
import { removeIdp, setIdp } from '../identity/idps.js';
import { readSecret } from './read-secret.js';
import { cliIo } from './io.js';
import { operator, orgTenant, print, withCore } from './store-command.js';
import { notFoundAs, UsageError } from './usage-error.js';

/** The environment variable an IdP client secret may come from. */
export const IDP_SECRET_ENV = 'GATEWAY_IDP_CLIENT_SECRET';

export interface IdpSetOptions {
  issuer: string;
  clientId: string;
  domains: string;
  role?: string;
  linkExisting?: boolean;
  clientSecretStdin?: boolean;
  removeClientSecret?: boolean;
}

/** The option each field of the settings comes from, for the refusals. */
const OPTION_OF: Record<string, string> = {
  issuer: '--issuer',
  client_id: '--client-id',
  client_secret: 'the client secret',
  domains: '--domains',
  role: '--role',
};

const ORG_ONLY = 'only org tenants have an identity provider';

export async function idpSet(
  loaded: LoadedConfig,
  tenantId: string,
  options: IdpSetOptions,
): Promise<void> {
  const settings = settingsOf(options, await clientSecretOf(options));
  await withCore(loaded, async (core) => {
    await orgTenant(core, tenantId, ORG_ONLY);
    const deps = {
      store: core.store,
      audit: core.audit,
      sealer: core.idpSecrets,
      allowPrivateIssuers: loaded.config.sso.allowPrivateIssuers,
    };
    const { idp } = await setIdp(deps, operator(), tenantId, settings).catch((err: unknown) => {
      throw asUsage(err);
    });
    print(idpView(idp));
  });
}

export async function idpShow(loaded: LoadedConfig, tenantId: string): Promise<void> {
  await withCore(loaded, async (core) => {
    await orgTenant(core, tenantId, ORG_ONLY);
    const idp = await core.store.idps.getTenantIdp(tenantId);
    if (idp === null) throw new UsageError(`${tenantId} has no identity provider`);
    print(idpView(idp));
  });
}

export async function idpRemove(loaded: LoadedConfig, tenantId: string): Promise<void> {
  await withCore(loaded, async (core) => {
    await orgTenant(core, tenantId, ORG_ONLY);
    const idp = await removeIdp(core, operator(), tenantId).catch(
      notFoundAs(`${tenantId} has no identity provider`),
    );
    print({ tenant_id: tenantId, issuer: idp.issuer, removed: true });
  });
}

/**
 * The secret given: from stdin with `--client-secret-stdin`, else from
 * `GATEWAY_IDP_CLIENT_SECRET`; null with `--remove-client-secret`; undefined
 * when none (the stored one is kept while the issuer and client id stay).
 */
async function clientSecretOf(options: IdpSetOptions): Promise<string | null | undefined> {
  const fromEnv = cliIo().env[IDP_SECRET_ENV];
  const given = options.clientSecretStdin === true || (fromEnv !== undefined && fromEnv !== '');
  if (options.removeClientSecret === true) {
    if (given) throw new UsageError('--remove-client-secret and a client secret contradict');
    return null;
  }
  if (options.clientSecretStdin === true) {
    return readSecret({
      prompt: 'IdP client secret: ',
      nothingGiven: 'no client secret on stdin (--client-secret-stdin)',
    });
  }
  return given ? fromEnv : undefined;
}

function settingsOf(options: IdpSetOptions, clientSecret: string | null | undefined): IdpSettings {
  try {
    return checkIdpSettings({
      issuer: options.issuer,
      client_id: options.clientId,
      ...(clientSecret === undefined ? {} : { client_secret: clientSecret }),
      domains: options.domains.split(',').map((domain) => domain.trim()),
      ...(options.role === undefined ? {} : { role: options.role }),
      link_existing: options.linkExisting === true,
    });
  } catch (err) {
    throw asUsage(err);
  }
}

/** A refusal of the settings, named by the option it came from. */
function asUsage(err: unknown): unknown {
  if (!isGatewayError(err) || err.code !== 'invalid_request' || err.detail === undefined)
    return err;
  const field = err.detail.split('.')[0] ?? err.detail;
  const option = OPTION_OF[field] ?? field;
  return new UsageError(`${option}: ${err.message.replace(/^Invalid [^:]+: /, '')}`);
}
