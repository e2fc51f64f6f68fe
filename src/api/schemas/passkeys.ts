/**
 * The shapes of passkeys (issue 45): WebAuthn's JSON forms of the ceremony
 * (W3C WebAuthn Level 3, `PublicKeyCredentialCreationOptionsJSON`,
 * `RegistrationResponseJSON`, `PublicKeyCredentialRequestOptionsJSON`), and a
 * passkey as its user sees it (never its key or credential id).
 */
import { z } from 'zod';
import { answerShapes, requestShapes, unixSeconds } from './registry.js';

const base64url = (description: string) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]*$/)
    .max(16384)
    .meta({ description });

export const PasskeyCreationOptions = z
  .looseObject({
    challenge: base64url(
      'Random, kept by the gateway for this browser session, 5 minutes, one use',
    ),
    rp: z.looseObject({ id: z.string(), name: z.string() }),
    user: z.looseObject({ id: z.string(), name: z.string(), displayName: z.string() }),
    pubKeyCredParams: z.array(z.looseObject({ alg: z.int(), type: z.literal('public-key') })),
    timeout: z.int().optional(),
    excludeCredentials: z
      .array(z.looseObject({ id: z.string(), type: z.literal('public-key') }))
      .optional()
      .meta({ description: "The user's passkeys already registered" }),
    authenticatorSelection: z
      .looseObject({
        residentKey: z.string().optional(),
        userVerification: z.string().optional(),
      })
      .optional(),
    attestation: z.string().optional(),
  })
  .register(answerShapes, {
    id: 'PasskeyCreationOptions',
    description:
      'For `navigator.credentials.create({ publicKey })` (binary fields base64url): a discoverable credential, user verification required, no attestation.',
  });

export const PasskeyRegistration = z
  .strictObject({
    response: z
      .looseObject({
        id: base64url('The credential id'),
        rawId: base64url('The credential id'),
        type: z.literal('public-key'),
        response: z.looseObject({
          clientDataJSON: base64url('As the browser gave it'),
          attestationObject: base64url('As the browser gave it'),
          transports: z.array(z.string().max(32)).max(8).optional(),
        }),
        clientExtensionResults: z.record(z.string(), z.unknown()),
        authenticatorAttachment: z.string().optional(),
      })
      .meta({
        description:
          "The browser's `PublicKeyCredential` from `navigator.credentials.create`, as `toJSON()` writes it",
      }),
    name: z
      .string()
      .max(64)
      .optional()
      .meta({ description: 'A name to tell it by (at most 64 characters); default `Passkey`' }),
  })
  .register(requestShapes, { id: 'PasskeyRegistration' });

export const Passkey = z
  .strictObject({
    passkey_id: z.string().meta({ description: '`pk_…`: what `DELETE` names it by' }),
    name: z.string(),
    created_at: unixSeconds(),
  })
  .register(answerShapes, { id: 'Passkey' });

export const PasskeyList = z
  .strictObject({
    passkeys: z.array(
      Passkey.extend({
        last_used_at: unixSeconds('Unix seconds of its last sign-in').nullable(),
      }),
    ),
  })
  .register(answerShapes, { id: 'PasskeyList' });

export const PasskeyRequestOptions = z
  .looseObject({
    challenge: base64url(
      "Random, kept by the gateway for this browser's pre-session cookie, 5 minutes, one use",
    ),
    rpId: z.string(),
    timeout: z.int().optional(),
    userVerification: z.literal('required'),
  })
  .register(answerShapes, {
    id: 'PasskeyRequestOptions',
    description:
      'For `navigator.credentials.get({ publicKey })` (binary fields base64url): no `allowCredentials` (the passkey names its user).',
  });

export const PasskeyOptionsForm = z
  .object({
    csrf_token: z
      .string()
      .meta({ description: "The sign-in page's form token, bound to its pre-session cookie." }),
  })
  .register(requestShapes, { id: 'PasskeyOptionsRequest' });
