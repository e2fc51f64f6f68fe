/**
 * The words of the account mails (issue 45): the e-mail verification link
 * and the password-reset link, each as text and as HTML. The link is the
 * only secret in a mail, and it is in the body only: a subject is logged by
 * mail servers and shown in lists.
 */
import type { MailMessage } from './mailer.js';

/** How long a verification link is good for (its record's TTL). */
export const VERIFICATION_LINK_SECONDS = 24 * 60 * 60;
/** How long a password-reset link is good for (its record's TTL). */
export const RESET_LINK_SECONDS = 30 * 60;

export function verificationMail(to: string, link: string): MailMessage {
  const lines = [
    'Please confirm that this is your e-mail address, so that you can sign in:',
    'open the link below and press "Confirm my address".',
    'The link works once, within 24 hours.',
    "If you did not sign up, ignore this mail: nothing happens without the link's button.",
  ];
  return message('email_verification', to, 'Confirm your e-mail address', lines, link);
}

export function passwordResetMail(to: string, link: string): MailMessage {
  const lines = [
    'Someone (we hope you) asked to reset the password of the account of this address.',
    'Open the link below to choose a new one. The link works once, within 30 minutes.',
    'If you did not ask for it, ignore this mail: your password stays as it is.',
  ];
  return message('password_reset', to, 'Reset your password', lines, link);
}

function message(
  kind: MailMessage['kind'],
  to: string,
  subject: string,
  lines: readonly string[],
  link: string,
): MailMessage {
  const text = `${lines.join('\n')}\n\n${link}\n`;
  const paragraphs = lines.map((line) => `<p>${escapeHtml(line)}</p>`).join('\n');
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>
<body>
${paragraphs}
<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>
</body></html>
`;
  return { kind, to, subject, text, html };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
