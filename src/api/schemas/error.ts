/** The body of every refusal: `{error, error_description}` (docs/identity-api.md#errors). */
import { z } from 'zod';
import { ERROR_CODES } from '../../errors.js';
import { answerShapes } from './registry.js';

export const ErrorBody = z
  .strictObject({
    error: z.enum(ERROR_CODES).meta({ description: 'The stable CODE to switch on.' }),
    error_description: z.string().min(1),
  })
  .register(answerShapes, { id: 'Error' });
