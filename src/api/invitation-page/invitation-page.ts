/**
 * The page a mailed invitation link opens (issue 45), in the sign-in pages'
 * look (`sign-in/page-layout.ts`): the tenant's name and the role, then what
 * the visitor can do — accept (signed in with the invited address), sign in
 * to accept, or, for an address with no account, choose a password. Every
 * value it shows is escaped; no script.
 */
import { alert, hidden, layout } from '../sign-in/page-layout.js';
import { escapeHtml } from '../../text/html.js';

/** What the visitor can do with a pending invitation. */
export type InvitationStep =
  /** Signed in (session) with the invited address: one button. */
  | { kind: 'accept' }
  /** Signed in as someone else: sign in with the invited address instead. */
  | { kind: 'other-account'; signedInAs: string; signInUrl: string | undefined }
  /** The address has an account: sign in to accept. */
  | { kind: 'sign-in'; signInUrl: string | undefined }
  /** No account yet: choose a password. */
  | { kind: 'sign-up' };

export interface InvitationView {
  /** The page's own path (`/1/invitations/{token}`): where its forms post. */
  path: string;
  tenantName: string;
  role: string;
  email: string;
  step: InvitationStep;
  error?: string | undefined;
}

export function invitationPage(view: InvitationView): string {
  const intro = `<p>You are invited to join <strong>${escapeHtml(view.tenantName)}</strong> as <strong>${escapeHtml(view.role)}</strong>, with the address <strong>${escapeHtml(view.email)}</strong>.</p>\n`;
  return layout(`Join ${view.tenantName}`, `${alert(view.error)}${intro}${stepOf(view)}`);
}

function stepOf(view: InvitationView): string {
  const step = view.step;
  switch (step.kind) {
    case 'accept':
      return form(view.path, 'accept', '', 'Accept the invitation');
    case 'sign-up':
      return form(
        view.path,
        'sign-up',
        `<label for="password">Choose a password (8 to 72 bytes)</label>
<input id="password" name="password" type="password" autocomplete="new-password" minlength="8" required autofocus${view.error === undefined ? '' : ' aria-invalid="true"'}>
`,
        'Create the account and join',
      );
    case 'sign-in':
      return `<p>Your address has an account. ${signInLink(step.signInUrl)}</p>\n`;
    case 'other-account':
      return `<p>You are signed in as ${escapeHtml(step.signedInAs)}: this invitation is for another address. ${signInLink(step.signInUrl)}</p>\n`;
  }
}

function form(path: string, action: string, fields: string, button: string): string {
  return `<form method="post" action="${escapeHtml(path)}">
${hidden('action', action)}
${fields}<button type="submit">${escapeHtml(button)}</button>
</form>
`;
}

function signInLink(url: string | undefined): string {
  if (url === undefined) return 'Sign in with it where you use this service, then accept.';
  return `<a href="${escapeHtml(url)}">Sign in with it to accept</a>.`;
}

/** The page after joining. */
export function joinedPage(
  tenantName: string,
  role: string,
  signInUrl: string | undefined,
): string {
  const next =
    signInUrl === undefined
      ? ''
      : `<p><a href="${escapeHtml(signInUrl)}">Sign in to ${escapeHtml(tenantName)}</a></p>\n`;
  return layout(
    `Welcome to ${tenantName}`,
    `<p role="status">You are now a member of <strong>${escapeHtml(tenantName)}</strong> as <strong>${escapeHtml(role)}</strong>.</p>\n${next}`,
  );
}

/** A refusal: an invitation not valid (used, revoked, expired), or another error. */
export function invitationRefusedPage(message: string): string {
  return layout('Invitation', alert(message));
}
