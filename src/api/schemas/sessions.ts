/** The shapes of a user's sessions (issue 44): browser sessions and refresh families alike. */
import { z } from 'zod';
import { answerShapes, unixSeconds } from './registry.js';

export const Session = z
  .strictObject({
    session_id: z.string().meta({
      description:
        "`ses_…` for a browser session; a refresh family's id (an access token's `fid`) for a login with refresh tokens",
    }),
    kind: z.enum(['browser', 'refresh']),
    tenant_id: z.string(),
    created_at: unixSeconds('Unix seconds: the sign-in or login'),
    last_seen_at: unixSeconds(
      "Unix seconds: a browser session's last use seen (approximate); a refresh family's last refresh, or its login",
    ),
    user_agent: z.string().nullable().meta({
      description:
        'The `User-Agent` the client sent at sign-in, at most 256 characters, as sent (text to show, never to trust); null when unknown (a family begun before issue 44, or none sent)',
    }),
    ip: z.string().nullable().meta({
      description: 'The client address at sign-in; null when unknown',
    }),
    current: z.boolean().meta({
      description:
        'Whether the request came with this session: its cookie, or a token of this family (`fid`)',
    }),
  })
  .register(answerShapes, { id: 'Session' });

export const SessionList = z
  .strictObject({ sessions: z.array(Session).meta({ description: 'Newest first' }) })
  .register(answerShapes, { id: 'SessionList' });
