/**
 * `mail` (issue 45): the SMTP server the gateway sends its mail through —
 * e-mail verification, password reset, invitations. Omitted: no mailed flow
 * is offered (`signup.verifyEmail` then cannot be on). Every link in a mail
 * is built from `publicUrl`, never from a request's `Host`, so `mail` needs it.
 */
import { z } from 'zod';
import { integer } from './values.js';

/** `smtp://` or `smtps://` with a host; userinfo carries the login (put it in `${ENV}`). */
const smtpUrl = z
  .string()
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'smtp:' || url.protocol === 'smtps:') && url.hostname !== '';
    } catch {
      return false;
    }
  }, 'must be an smtp:// or smtps:// URL (smtp://user:pass@mail.internal:587)')
  .meta({ typeName: 'smtp(s) URL' });

/** An RFC 5322 mailbox: `addr@host` or `Name <addr@host>`, one line. */
const mailbox = z
  .string()
  .regex(
    /^(?:[^<>\r\n]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/,
    'must be an address (no-reply@example.com) or a name and an address (Gateway <no-reply@example.com>)',
  )
  .meta({ typeName: 'mailbox' });

export const mail = z
  .strictObject({
    smtp: smtpUrl.describe(
      'the SMTP server: `smtp://` (STARTTLS when the server offers it) or `smtps://` (TLS from the start); its login in the userinfo, best from `${ENV}`',
    ),
    from: mailbox.describe('`From` of every mail the gateway sends'),
    sendTimeoutMs: integer(1000, 600_000)
      .default(30_000)
      .describe('one attempt to hand a mail to the SMTP server, connection included'),
    attempts: integer(1, 20)
      .default(5)
      .describe(
        'attempts per mail (with a growing pause between them) before it is logged and counted as failed; a request never waits for them',
      ),
  })
  .optional()
  .meta({
    description:
      'Outgoing mail (verification, password reset, invitations); needs `publicUrl` for the links.',
    examples: [
      { smtp: 'smtp://${SMTP_LOGIN}@mail.internal:587', from: 'Gateway <no-reply@example.com>' },
    ],
  });

export type MailConfig = NonNullable<z.output<typeof mail>>;

/** `mail` needs `publicUrl`; `signup.verifyEmail: true` needs `mail`. */
export function checkMail(config: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const hasMail = config['mail'] !== undefined;
  if (hasMail && config['publicUrl'] === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['mail'],
      message: "needs publicUrl: every mailed link is built from it, never from a request's Host",
    });
  }
  const verifyEmail = (config['signup'] as { verifyEmail?: unknown } | undefined)?.verifyEmail;
  if (verifyEmail === true && !hasMail) {
    ctx.addIssue({
      code: 'custom',
      path: ['signup', 'verifyEmail'],
      message: 'needs mail: the verification link is mailed',
    });
  }
}
