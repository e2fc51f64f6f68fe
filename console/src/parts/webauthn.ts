/**
 * A passkey made by the browser (`navigator.credentials.create`) from the
 * gateway's creation options, as the sign-in page's script encodes a
 * ceremony: the options' binary fields arrive base64url and become bytes;
 * the browser's answer goes back with its binary fields base64url (the
 * `RegistrationResponseJSON` shape of WebAuthn Level 3, written out by hand
 * rather than by `toJSON()`, which older browsers lack).
 */
import { ApiError } from '../api';

export interface CreationOptions {
  challenge: string;
  user: { id: string; name: string; displayName: string };
  excludeCredentials?: { id: string; type: 'public-key' }[];
  [field: string]: unknown;
}

const text = (buffer: ArrayBuffer): string => {
  let s = '';
  for (const byte of new Uint8Array(buffer)) s += String.fromCharCode(byte);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};

const bytes = (value: string): ArrayBuffer => {
  let s = value.replace(/-/g, '+').replace(/_/g, '/');
  while (s.length % 4 !== 0) s += '=';
  return Uint8Array.from(atob(s), (c) => c.charCodeAt(0)).buffer;
};

/** Whether this browser can make a passkey at all. */
export const canMakePasskeys = () =>
  typeof window.PublicKeyCredential === 'function' && navigator.credentials !== undefined;

/**
 * Lets the browser make a passkey for `options`; its answer, ready to post.
 * @throws ApiError `passkey_not_made` when the person or the browser cancelled
 */
export async function makePasskey(options: CreationOptions): Promise<Record<string, unknown>> {
  let credential: Credential | null;
  try {
    credential = await navigator.credentials.create({
      publicKey: {
        ...(options as unknown as PublicKeyCredentialCreationOptions),
        challenge: bytes(options.challenge),
        user: { ...options.user, id: bytes(options.user.id) },
        excludeCredentials: (options.excludeCredentials ?? []).map((c) => ({
          ...c,
          id: bytes(c.id),
        })),
      },
    });
  } catch (err) {
    const name = err instanceof Error ? err.name : 'Error';
    throw new ApiError(0, 'passkey_not_made', `The browser said: ${name}.`);
  }
  if (!(credential instanceof PublicKeyCredential))
    throw new ApiError(0, 'passkey_not_made', 'The browser gave no passkey.');
  const r = credential.response as AuthenticatorAttestationResponse;
  return {
    id: credential.id,
    rawId: text(credential.rawId),
    type: credential.type,
    ...(credential.authenticatorAttachment === null
      ? {}
      : { authenticatorAttachment: credential.authenticatorAttachment }),
    clientExtensionResults: credential.getClientExtensionResults(),
    response: {
      clientDataJSON: text(r.clientDataJSON),
      attestationObject: text(r.attestationObject),
      ...(typeof r.getTransports === 'function' ? { transports: r.getTransports() } : {}),
    },
  };
}
