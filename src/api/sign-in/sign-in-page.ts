/**
 * The sign-in pages as HTML, server-rendered with no script at all: the
 * password form (and, with `sso.enabled`, "sign in with your company"), and
 * the tenant choice a user of several tenants makes after the password.
 * Everything echoed is escaped (`html.ts`); the password never is echoed.
 * Labels are tied to their inputs, a refusal is an alert the inputs name
 * (`aria-describedby`) and that takes the focus.
 */
import { escapeHtml } from '../../text/html.js';
import { ALERT_ID, alert, hidden, layout } from './page-layout.js';

/** The form posts here; its fields are read by `sign-in-form.ts`. */
export const SIGN_IN_PATH = '/1/sign-in';
/** The company sign-in (the SSO routes own it): a GET with `email` and `return_to`. */
export const SSO_SIGN_IN_PATH = '/1/sign-in/sso';

/** What the password form shows. */
export interface SignInView {
  returnTo: string;
  tenantId?: string | undefined;
  /** The e-mail typed before, kept after a refusal. */
  email?: string | undefined;
  /** The login-CSRF token bound to the browser's pre-session cookie (`form-token.ts`). */
  formToken: string;
  /** A refusal, in words for a person. */
  error?: string | undefined;
  /** `sso.enabled`: offer the company sign-in. */
  company: boolean;
}

export function signInPage(view: SignInView): string {
  const described = view.error === undefined ? '' : ` aria-describedby="${ALERT_ID}"`;
  const invalid = view.error === undefined ? '' : ' aria-invalid="true"';
  const first = view.error === undefined ? ' autofocus' : '';
  const fields = [
    hidden('csrf_token', view.formToken),
    hidden('return_to', view.returnTo),
    ...(view.tenantId === undefined ? [] : [hidden('tenant_id', view.tenantId)]),
  ].join('\n');
  const form = `<form method="post" action="${SIGN_IN_PATH}">
${fields}
<label for="email">E-mail</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(view.email ?? '')}"${described}${invalid}${first}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${described}${invalid}>
<button type="submit">Sign in</button>
</form>
`;
  return layout('Sign in', `${alert(view.error)}${form}${view.company ? companyForm(view) : ''}`);
}

function companyForm(view: SignInView): string {
  return `<hr class="divider">
<h2>Sign in with your company</h2>
<form method="get" action="${SSO_SIGN_IN_PATH}">
${hidden('return_to', view.returnTo)}
<label for="company-email">Work e-mail</label>
<input id="company-email" name="email" type="email" autocomplete="email" required>
<button type="submit" class="secondary">Continue with your company</button>
</form>
`;
}

/** What the tenant choice shows: the user's tenants, after the password was proven. */
export interface TenantChoiceView {
  tenants: readonly { tenantId: string; name: string }[];
  formToken: string;
  error?: string | undefined;
}

export function tenantChoicePage(view: TenantChoiceView): string {
  const choices = view.tenants
    .map(
      (tenant, i) => `<div class="choice">
<input type="radio" id="tenant-${i}" name="tenant_id" value="${escapeHtml(tenant.tenantId)}"${i === 0 ? ' checked autofocus' : ''}>
<label for="tenant-${i}">${escapeHtml(tenant.name)}</label>
</div>`,
    )
    .join('\n');
  const form = `<form method="post" action="${SIGN_IN_PATH}">
${hidden('csrf_token', view.formToken)}
${hidden('step', 'tenant')}
<fieldset>
<legend>Which organisation do you sign in to?</legend>
${choices}
</fieldset>
<button type="submit">Continue</button>
</form>
`;
  return layout('Choose an organisation', `${alert(view.error)}${form}`);
}
