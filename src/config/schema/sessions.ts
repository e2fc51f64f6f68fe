/**
 * Browser sessions (`sessions`, issue 44): the sign-in page, the session
 * cookie and its lifetimes. A session is a server-side record
 * (`auth/sessions/`); the cookie carries its id and a secret the store keeps
 * only hashed.
 */
import { z } from 'zod';
import { boolean, hostName, integer } from './values.js';

/** RFC 6265 §4.1.1: a cookie name is an RFC 2616 token. */
const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,64}$/;

/** The cookie's name when `sessions.cookie.name` is omitted: the `__Host-` prefix needs `Secure`. */
export const SESSION_COOKIE_DEFAULTS = { secure: '__Host-tg_session', insecure: 'tg_session' };

export const sessions = z
  .strictObject({
    enabled: boolean()
      .default(false)
      .describe(
        'the sign-in page (`/1/sign-in`), the session cookie and `routes[].auth: session`: a web app behind the gateway without tokens',
      ),
    cookie: z
      .strictObject({
        name: z
          .string()
          .regex(COOKIE_NAME, 'must be a cookie name (RFC 6265 token, at most 64 characters)')
          .optional()
          .describe(
            '`__Host-tg_session` by default (`tg_session` with `secure: false`); a `__Host-` or `__Secure-` name needs `secure: true`',
          ),
        secure: boolean()
          .default(true)
          .describe(
            '`Secure` on the cookie. `false` only for trials on localhost over plain HTTP: the cookie then travels over cleartext and has no `__Host-` prefix, so a sibling host could set one',
          ),
      })
      .prefault({})
      .describe('the session cookie: HttpOnly, SameSite=Lax, Path=/ always'),
    idleTimeoutSeconds: integer(60, 31_536_000)
      .default(28_800)
      .describe('a session unused this long ends (seconds)'),
    absoluteTimeoutSeconds: integer(60, 31_536_000)
      .default(604_800)
      .describe('a session ends this long after its sign-in, used or not (seconds)'),
    returnHosts: z
      .array(hostName())
      .default([])
      .describe(
        "hosts besides the request's own that `return_to` may name after a sign-in (exact host names, compared in lower case); any other is refused, never redirected to",
      ),
  })
  .superRefine((value, ctx) => {
    const { name } = value.cookie;
    if (!value.cookie.secure && name !== undefined && /^__(host|secure)-/i.test(name)) {
      ctx.addIssue({
        code: 'custom',
        path: ['cookie', 'name'],
        message: 'a __Host- or __Secure- cookie is set only with secure: true',
      });
    }
    if (value.absoluteTimeoutSeconds < value.idleTimeoutSeconds) {
      ctx.addIssue({
        code: 'custom',
        path: ['absoluteTimeoutSeconds'],
        message: 'must be at least idleTimeoutSeconds',
      });
    }
  })
  .meta({
    description:
      'Browser sessions: the sign-in page and the session cookie (`routes[].auth: session`).',
    examples: [
      {
        enabled: true,
        idleTimeoutSeconds: 28_800,
        absoluteTimeoutSeconds: 604_800,
        returnHosts: ['app.example.com'],
      },
    ],
  })
  .prefault({});

export type SessionsConfig = z.output<typeof sessions>;

/** The session cookie's name: `cookie.name`, else the default for `cookie.secure`. */
export function sessionCookieName(config: SessionsConfig): string {
  return (
    config.cookie.name ??
    (config.cookie.secure ? SESSION_COOKIE_DEFAULTS.secure : SESSION_COOKIE_DEFAULTS.insecure)
  );
}
