/** The shapes of the mailed account flows (issue 45): e-mail verification and password reset. */
import { z } from 'zod';
import { answerShapes, requestShapes } from './registry.js';

export const PasswordResetRequest = z
  .strictObject({ email: z.string().meta({ description: 'The address of the account.' }) })
  .register(requestShapes, { id: 'PasswordResetRequest' });

/** The one answer of a reset request, whatever the address. */
export const PasswordResetRequested = z
  .strictObject({
    message: z.string().meta({ description: 'The same sentence for every address.' }),
  })
  .register(answerShapes, { id: 'PasswordResetRequested' });

export const PasswordReset = z
  .strictObject({
    password: z.string().meta({ description: '8 to 72 bytes of UTF-8, no control characters' }),
  })
  .register(requestShapes, { id: 'PasswordReset' });

export const LinkTokenParam = z.object({
  token: z
    .string()
    .meta({ description: 'The one-time token of the mailed link (43 base64url characters).' }),
});
