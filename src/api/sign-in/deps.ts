/** What the sign-in page and the sign-out need beyond the identity endpoints' deps. */
import type { BrowserSessions, SessionPrincipal } from '../../auth/sessions/browser-sessions.js';
import type { SessionsConfig } from '../../config/schema/sessions.js';
import type { SignInOutcome } from '../../ops/sign-in-outcomes.js';

export interface SignInDeps {
  /** `sessions`: the cookies' names and `Secure`, `returnHosts`. */
  config: SessionsConfig;
  /** Begins and ends the sessions (`auth/sessions/`). */
  browserSessions: BrowserSessions;
  /** `sso.enabled`: the page offers "sign in with your company". */
  company: boolean;
  /** `mfa.passkeys.enabled`: the page offers "sign in with a passkey" (and its script). */
  passkeys?: boolean;
  /** `mail`: the page links to the password reset ("Forgot your password?"). */
  passwordReset?: boolean;
  /** Told of every sign-in post by outcome (metrics). */
  onSignIn?: (outcome: SignInOutcome) => void;
  /**
   * RP-initiated logout (the SSO sign-in): given a session about to end,
   * the URL of its IdP's end-session endpoint to send the browser to, or
   * undefined when there is none. Called before the session is ended.
   */
  endAtIdp?: (session: SessionPrincipal) => Promise<string | undefined>;
}
