/**
 * The operations on a user's own sessions (issue 44): list them, end one.
 * Reached by a bearer token or the session cookie; with the cookie, a DELETE
 * must come from the gateway's own origin (Fetch Metadata, else `Origin`).
 */
import { z } from 'zod';
import { answer, NO_STORE, refusal, SESSION_OR_BEARER, type Operation } from './operation.js';
import { CALLER_REFUSED, STORE_DOWN } from './refusals.js';
import { SessionList } from './sessions.js';

const CLIENT_REFUSED = refusal('A machine client has no sessions.', 'forbidden');

export const listSessions: Operation = {
  method: 'get',
  path: '/1/sessions',
  operationId: 'listSessions',
  summary: "The caller's own sessions: browser sessions and refresh-token logins, newest first",
  tags: ['identity'],
  security: SESSION_OR_BEARER,
  answers: {
    200: answer("The sessions, the caller's own marked `current`.", SessionList, NO_STORE),
  },
  refusals: { 401: CALLER_REFUSED, 403: CLIENT_REFUSED, 503: STORE_DOWN },
};

export const endSession: Operation = {
  method: 'delete',
  path: '/1/sessions/{session_id}',
  operationId: 'endSession',
  summary: "End one of the caller's sessions, either kind, on every instance before the answer",
  description:
    "A refresh family ends with every access token issued in it. Another user's session is `not_found`, as an id that never existed.",
  tags: ['identity'],
  security: SESSION_OR_BEARER,
  params: z.object({
    session_id: z.string().meta({ description: 'A `session_id` of `GET /1/sessions`.' }),
  }),
  answers: { 204: { description: 'Ended everywhere.' } },
  refusals: {
    401: CALLER_REFUSED,
    403: {
      description: `${CLIENT_REFUSED.description} With the session cookie: the request did not come from the gateway's own origin (\`Sec-Fetch-Site\`, else \`Origin\`).`,
      codes: ['forbidden', 'csrf_refused'],
    },
    404: refusal(
      "No such session of the caller's (unknown, ended, or another user's).",
      'not_found',
    ),
    503: STORE_DOWN,
  },
};
