/**
 * `mfa` (issue 45): second factors — TOTP (RFC 6238) and passkeys (WebAuthn)
 * — and whether tenants' admins must have one before acting as admins.
 */
import { z } from 'zod';
import { boolean, hostName } from './values.js';

export const mfa = z
  .strictObject({
    totp: z
      .strictObject({
        enabled: boolean()
          .default(false)
          .describe(
            'users may enrol a TOTP authenticator (`/1/users/current/mfa/totp`); once enrolled, a password login needs `X-OTP` (or the sign-in page asks for the code). Needs a sealing key: `secretsKeyFile`, else `sso.secretsKeyFile`',
          ),
        secretsKeyFile: z
          .string()
          .min(1)
          .optional()
          .describe(
            "file of 32 random bytes in base64 (`openssl rand -base64 32`), relative to the config file: the key that seals users' TOTP secrets in the store (AES-256-GCM, bound to the user). Every instance and the CLI must read the same file; replacing it strands every enrolled authenticator. Omitted: `sso.secretsKeyFile`'s key",
          ),
      })
      .prefault({})
      .describe('TOTP (RFC 6238): 6 digits, 30 s, SHA-1, as authenticator apps expect'),
    passkeys: z
      .strictObject({
        enabled: boolean()
          .default(false)
          .describe(
            'users signed in may register passkeys (`/1/users/current/passkeys`), which sign in on the sign-in page as both factors; needs `sessions.enabled` and `publicUrl`',
          ),
        rpId: hostName()
          .optional()
          .describe(
            "the WebAuthn relying party id: `publicUrl`'s host or a domain it is under; omitted: `publicUrl`'s host. A passkey works only under the rpId it was made for: changing it strands every passkey",
          ),
        rpName: z
          .string()
          .min(1)
          .default('tenant-gateway')
          .describe('the name an authenticator shows for the gateway'),
      })
      .prefault({})
      .describe('passkeys (WebAuthn)'),
    requiredForAdmins: boolean()
      .default(false)
      .describe(
        "a tenant's admin without a second factor (TOTP or a passkey) is refused what needs the admin role (403 `forbidden`) until they enrol one",
      ),
  })
  .meta({
    description: 'Second factors: TOTP and passkeys.',
    examples: [
      { totp: { enabled: true, secretsKeyFile: './totp-secrets.key' }, requiredForAdmins: true },
    ],
  })
  .prefault({});

export type MfaConfig = z.output<typeof mfa>;

/**
 * TOTP needs a sealing key; passkeys need browser sessions and `publicUrl`
 * (their origin), and an rpId `publicUrl`'s host is under.
 */
export function checkMfa(config: Record<string, unknown>, ctx: z.RefinementCtx): void {
  checkTotpKey(config, ctx);
  checkRequiredForAdmins(config, ctx);
  const passkeys = (
    config['mfa'] as { passkeys?: { enabled?: unknown; rpId?: unknown } } | undefined
  )?.passkeys;
  if (passkeys?.enabled !== true) return;
  const sessions = (config['sessions'] as { enabled?: unknown } | undefined)?.enabled;
  if (sessions !== true) {
    ctx.addIssue({
      code: 'custom',
      path: ['mfa', 'passkeys', 'enabled'],
      message: 'needs sessions.enabled: true (a passkey signs in on the sign-in page)',
    });
  }
  const publicUrl = config['publicUrl'];
  if (typeof publicUrl !== 'string') {
    ctx.addIssue({
      code: 'custom',
      path: ['mfa', 'passkeys', 'enabled'],
      message: 'needs publicUrl: the origin passkeys are bound to',
    });
    return;
  }
  const rpId = passkeys.rpId;
  if (typeof rpId !== 'string') return;
  let host: string;
  try {
    host = new URL(publicUrl).hostname;
  } catch {
    return;
  }
  const id = rpId.toLowerCase();
  if (host !== id && !host.endsWith(`.${id}`)) {
    ctx.addIssue({
      code: 'custom',
      path: ['mfa', 'passkeys', 'rpId'],
      message: `must be ${host} or a domain it is under`,
    });
  }
}

/** The WebAuthn rpId: `mfa.passkeys.rpId`, else `publicUrl`'s host. */
export function passkeyRpId(
  mfaConfig: MfaConfig,
  publicUrl: string | undefined,
): string | undefined {
  return (
    mfaConfig.passkeys.rpId?.toLowerCase() ??
    (publicUrl === undefined ? undefined : new URL(publicUrl).hostname)
  );
}

/** `mfa.totp.enabled` with no key to seal secrets with (its own, or `sso.secretsKeyFile`) is a config error. */
function checkTotpKey(config: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const totp = (config['mfa'] as { totp?: { enabled?: unknown; secretsKeyFile?: unknown } })?.totp;
  if (totp?.enabled !== true || totp.secretsKeyFile !== undefined) return;
  const sso = config['sso'] as { secretsKeyFile?: unknown } | undefined;
  if (sso?.secretsKeyFile !== undefined) return;
  ctx.addIssue({
    code: 'custom',
    path: ['mfa', 'totp', 'secretsKeyFile'],
    message:
      "needed with mfa.totp.enabled (or sso.secretsKeyFile): the key that seals users' TOTP secrets (openssl rand -base64 32)",
  });
}

/** The file of the key that seals TOTP secrets: `mfa.totp.secretsKeyFile`, else `sso.secretsKeyFile`, with the key path to name. */
export function totpKeyFile(config: {
  mfa: MfaConfig;
  sso: { secretsKeyFile?: string | undefined };
}): { file: string; setting: string } | undefined {
  if (config.mfa.totp.secretsKeyFile !== undefined)
    return { file: config.mfa.totp.secretsKeyFile, setting: 'mfa.totp.secretsKeyFile' };
  if (config.sso.secretsKeyFile !== undefined)
    return { file: config.sso.secretsKeyFile, setting: 'sso.secretsKeyFile' };
  return undefined;
}

/** Requiring a second factor of admins with no factor to enrol would lock every admin out. */
function checkRequiredForAdmins(config: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const mfaConfig = config['mfa'] as
    | {
        requiredForAdmins?: unknown;
        totp?: { enabled?: unknown };
        passkeys?: { enabled?: unknown };
      }
    | undefined;
  if (mfaConfig?.requiredForAdmins !== true) return;
  if (mfaConfig.totp?.enabled === true || mfaConfig.passkeys?.enabled === true) return;
  ctx.addIssue({
    code: 'custom',
    path: ['mfa', 'requiredForAdmins'],
    message:
      'needs mfa.totp.enabled or mfa.passkeys.enabled: without a factor to enrol, no admin could act',
  });
}
