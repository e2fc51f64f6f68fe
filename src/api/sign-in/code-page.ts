/**
 * The sign-in page's code step (issue 45): after the password, a user with a
 * second factor is asked for the authenticator app's code — one field
 * (`autocomplete="one-time-code"`, numeric keyboard) and, reached by a link
 * on the same page ("Use a recovery code", no script), a second form for a
 * recovery code. Both post the form token and `step=code`.
 */
import { alert, hidden, layout } from './page-layout.js';
import { SIGN_IN_PATH } from './sign-in-page.js';

export interface CodeView {
  formToken: string;
  /** A refusal, in words for a person. */
  error?: string | undefined;
}

export function codePage(view: CodeView): string {
  const fields = `${hidden('csrf_token', view.formToken)}\n${hidden('step', 'code')}`;
  const invalid =
    view.error === undefined ? '' : ' aria-invalid="true" aria-describedby="sign-in-alert"';
  const first = view.error === undefined ? ' autofocus' : '';
  const body = `${alert(view.error)}<p>Enter the 6-digit code your authenticator app shows.</p>
<form method="post" action="${SIGN_IN_PATH}">
${fields}
<label for="code">Code</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="6" required${invalid}${first}>
<button type="submit">Continue</button>
</form>
<p><a href="#recovery">Use a recovery code</a> if you do not have your device.</p>
<hr class="divider">
<h2 id="recovery">Use a recovery code</h2>
<form method="post" action="${SIGN_IN_PATH}">
${fields}
<label for="recovery-code">Recovery code</label>
<input id="recovery-code" name="code" type="text" autocomplete="off" autocapitalize="none" spellcheck="false" maxlength="32" required>
<button type="submit" class="secondary">Continue with a recovery code</button>
</form>
`;
  return layout('Enter your code', body);
}
