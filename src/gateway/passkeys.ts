/** Passkeys' deps (`identity/passkey-deps.ts`), built from the config: present with `mfa.passkeys.enabled` only. */
import type { GatewayConfig } from '../config/index.js';
import { passkeyRpId } from '../config/schema/mfa.js';
import type { Core } from '../core/create-core.js';
import type { PasskeyDeps } from '../identity/passkey-deps.js';

/**
 * The relying party is the gateway at `publicUrl` (its origin, the rpId
 * configured or its host); undefined unless passkeys are on (the config's
 * validation made sure sessions and `publicUrl` are there then).
 */
export function passkeyDepsOf(config: GatewayConfig, core: Core): PasskeyDeps | undefined {
  const { publicUrl } = config;
  if (!config.mfa.passkeys.enabled || !config.sessions.enabled || publicUrl === undefined)
    return undefined;
  const id = passkeyRpId(config.mfa, publicUrl);
  if (id === undefined) return undefined;
  return {
    store: core.store,
    audit: core.audit,
    relyingParty: { id, name: config.mfa.passkeys.rpName, origin: new URL(publicUrl).origin },
  };
}
