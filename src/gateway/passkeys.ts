/** Passkeys' deps (`identity/passkey-deps.ts`), built from the config: present with `mfa.passkeys.enabled` only. */
import type { GatewayConfig } from '../config/index.js';
import { passkeyRpId } from '../config/schema/mfa.js';
import type { Core } from '../core/create-core.js';
import type { PasskeyDeps } from '../identity/passkey-deps.js';

/**
 * The relying party is the gateway at `publicUrl` (its origin, the rpId
 * configured or its host); undefined unless passkeys are on (the config's
 * validation made sure sessions and `publicUrl` are there then). The WebAuthn
 * library is loaded here, and only then: a start without passkeys does not
 * pay its ~0.4 s of CPU.
 */
export async function loadPasskeyDeps(
  config: GatewayConfig,
  core: Core,
): Promise<PasskeyDeps | undefined> {
  const { publicUrl } = config;
  if (!config.mfa.passkeys.enabled || !config.sessions.enabled || publicUrl === undefined)
    return undefined;
  const id = passkeyRpId(config.mfa, publicUrl);
  if (id === undefined) return undefined;
  return {
    store: core.store,
    audit: core.audit,
    relyingParty: { id, name: config.mfa.passkeys.rpName, origin: new URL(publicUrl).origin },
    webauthn: await import('@simplewebauthn/server'),
  };
}
