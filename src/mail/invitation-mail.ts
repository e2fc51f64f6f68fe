/**
 * The mail an invitee gets (issue 45): who invited them to which tenant and
 * with which role, the one-time link, and until when it is good. Text and
 * HTML; the subject names the tenant only (never the link: subjects are
 * logged by mail servers and shown in lists).
 */
import { escapeHtml } from '../text/html.js';
import { mailedLink } from './links.js';
import type { MailMessage } from './mailer.js';

export interface InvitationMailInput {
  to: string;
  tenantName: string;
  role: string;
  invitedBy: string;
  /** The one-time token: in the link, nowhere else. */
  token: string;
  /** Unix seconds. */
  expiresAt: number;
  publicUrl: string;
}

export function invitationMail(input: InvitationMailInput): MailMessage {
  const link = mailedLink(input.publicUrl, `/1/invitations/${input.token}`);
  const until = new Date(input.expiresAt * 1000).toUTCString();
  const lead = `${input.invitedBy} invited you to join ${input.tenantName} as ${input.role}.`;
  const text = [
    lead,
    '',
    'Follow this link to accept (or to choose a password if you have no account yet):',
    link,
    '',
    `The link works once, until ${until}.`,
    'If you did not expect this invitation, ignore this mail.',
    '',
  ].join('\n');
  const html = `<!doctype html>
<html lang="en"><body>
<p>${escapeHtml(lead)}</p>
<p><a href="${escapeHtml(link)}">Accept the invitation</a></p>
<p>The link works once, until ${escapeHtml(until)}.<br>
If you did not expect this invitation, ignore this mail.</p>
</body></html>
`;
  return {
    kind: 'invitation',
    to: input.to,
    subject: `You are invited to join ${oneLine(input.tenantName)}`,
    text,
    html,
  };
}

/** A tenant's name in a header: one line, however it was written. */
function oneLine(text: string): string {
  return text.replace(/[\r\n\t]+/g, ' ').slice(0, 100);
}
