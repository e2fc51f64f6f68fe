/** The shapes of users: signing up and changing the password. */
import { z } from 'zod';
import { answerShapes, requestShapes } from './registry.js';

export const SignupRequest = z
  .strictObject({
    email: z.string(),
    password: z.string().meta({ description: '8 to 72 bytes of UTF-8, no control characters' }),
    name: z.string().max(200).optional(),
  })
  .register(requestShapes, { id: 'SignupRequest' });

export const SignupResponse = z
  .strictObject({
    user_id: z.string(),
    user_email: z.string(),
    tenant_id: z.string().meta({ description: 'The new personal tenant' }),
  })
  .register(answerShapes, { id: 'SignupResponse' });

export const PasswordChange = z
  .strictObject({ password: z.string() })
  .register(requestShapes, { id: 'PasswordChange' });
