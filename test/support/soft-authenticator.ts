/**
 * A software WebAuthn authenticator for the passkey suites that need no
 * browser: an ES256 key pair per passkey, `none` attestation, the
 * authenticator data and client data a platform authenticator and a browser
 * write (WebAuthn Level 3 §6.1, §5.8.1), each field overridable so a test can
 * send what an attacker would (another origin, no user verification, a
 * counter gone backwards, another user's handle). The Chromium suite uses
 * Chromium's own virtual authenticator instead.
 */
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string): Buffer => createHash('sha256').update(data).digest();

/** What an authenticator holds of one passkey. */
export interface SoftPasskey {
  credentialId: Buffer;
  userHandle: string;
  rpId: string;
  privateKey: KeyObject;
  counter: number;
}

/** What a ceremony may be told to get wrong. */
export interface Tamper {
  origin?: string;
  /** The user-verified flag (default set). */
  verified?: boolean;
  /** The counter to sign (default: the passkey's, moved on by one). */
  counter?: number;
  /** The user handle to send, base64url (default the passkey's). */
  userHandle?: string;
  /** The challenge to sign (default the options'). */
  challenge?: string;
}

const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

function authData(rpId: string, flags: number, counter: number, attested?: Buffer): Buffer {
  const count = Buffer.alloc(4);
  count.writeUInt32BE(counter);
  return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, attested ?? Buffer.alloc(0)]);
}

function coseKey(privateKey: KeyObject): Uint8Array {
  const jwk = privateKey.export({ format: 'jwk' });
  const x = Buffer.from(jwk.x as string, 'base64url');
  const y = Buffer.from(jwk.y as string, 'base64url');
  return isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, new Uint8Array(x)],
      [-3, new Uint8Array(y)],
    ]),
  );
}

/** Creation options as the gateway answers them (the fields read here). */
export interface CreationOptions {
  challenge: string;
  rp: { id: string };
  user: { id: string };
}

/** A new passkey for `options`, and the registration response a browser sends. */
export function createPasskey(
  options: CreationOptions,
  origin: string,
  tamper: Tamper = {},
): { passkey: SoftPasskey; response: Record<string, unknown> } {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const credentialId = sha256(`${Math.random()}${Date.now()}`);
  const idLength = Buffer.alloc(2);
  idLength.writeUInt16BE(credentialId.length);
  const attested = Buffer.concat([
    Buffer.alloc(16),
    idLength,
    credentialId,
    Buffer.from(coseKey(privateKey)),
  ]);
  const flags = UP | AT | (tamper.verified === false ? 0 : UV);
  const data = authData(options.rp.id, flags, 0, attested);
  const clientData = JSON.stringify({
    type: 'webauthn.create',
    challenge: tamper.challenge ?? options.challenge,
    origin: tamper.origin ?? origin,
    crossOrigin: false,
  });
  const statement = new Map<string, string>();
  const attestation = isoCBOR.encode(
    new Map<string, string | Map<string, string> | Uint8Array>([
      ['fmt', 'none'],
      ['attStmt', statement],
      ['authData', new Uint8Array(data)],
    ]),
  );
  const id = b64(credentialId);
  return {
    passkey: {
      credentialId,
      userHandle: options.user.id,
      rpId: options.rp.id,
      privateKey,
      counter: 0,
    },
    response: {
      id,
      rawId: id,
      type: 'public-key',
      response: {
        clientDataJSON: Buffer.from(clientData).toString('base64url'),
        attestationObject: b64(attestation),
        transports: ['internal'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    },
  };
}

/** The assertion a browser sends for `challenge`, signed by the passkey (its counter moved on). */
export function assertPasskey(
  passkey: SoftPasskey,
  challenge: string,
  origin: string,
  tamper: Tamper = {},
): Record<string, unknown> {
  const counter = tamper.counter ?? passkey.counter + 1;
  passkey.counter = Math.max(passkey.counter, counter);
  const data = authData(passkey.rpId, UP | (tamper.verified === false ? 0 : UV), counter);
  const clientData = Buffer.from(
    JSON.stringify({
      type: 'webauthn.get',
      challenge: tamper.challenge ?? challenge,
      origin: tamper.origin ?? origin,
      crossOrigin: false,
    }),
  );
  const signature = sign('sha256', Buffer.concat([data, sha256(clientData)]), passkey.privateKey);
  const id = b64(passkey.credentialId);
  return {
    id,
    rawId: id,
    type: 'public-key',
    response: {
      clientDataJSON: b64(clientData),
      authenticatorData: b64(data),
      signature: b64(signature),
      userHandle: tamper.userHandle ?? passkey.userHandle,
    },
    clientExtensionResults: {},
    authenticatorAttachment: 'platform',
  };
}
