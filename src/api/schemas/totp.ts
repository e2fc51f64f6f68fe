/** The shapes of a user's TOTP second factor (issue 45). */
import { z } from 'zod';
import { answerShapes, requestShapes } from './registry.js';

export const TotpEnrolment = z
  .strictObject({
    secret: z.string().meta({
      description: 'The new secret, base32 (RFC 4648), for typing into an app: shown once',
    }),
    otpauth_uri: z.string().meta({
      description:
        '`otpauth://totp/<issuer>:<email>?secret=…&issuer=…` (6 digits, 30 s, SHA-1), for a QR code',
    }),
  })
  .register(answerShapes, { id: 'TotpEnrolment' });

export const TotpConfirmation = z
  .strictObject({
    code: z
      .string()
      .meta({ description: "The authenticator app's current 6-digit code for the new secret" }),
  })
  .register(requestShapes, { id: 'TotpConfirmation' });

export const RecoveryCodes = z
  .strictObject({
    recovery_codes: z.array(z.string()).length(10).meta({
      description:
        'Ten one-use codes (`xxxx-xxxx-xxxx-xxxx`), each good once in place of a code: shown this once, stored only hashed',
    }),
  })
  .register(answerShapes, { id: 'RecoveryCodes' });
