/** What the identity endpoints are built from: the store, the auth services, the audit log and limits. */
import type { IncomingMessage } from 'node:http';
import type { AuditRecorder } from '../../audit/recorder.js';
import type { Accounts } from '../../auth/accounts.js';
import type { Authenticate } from '../../auth/credentials/authenticate.js';
import type { TxtLookup } from '../../auth/federation/dns-txt.js';
import type { BruteForceGuard } from '../../auth/passwords/brute-force.js';
import type { GrantClientToken } from '../../auth/clients/client-credentials.js';
import type { BrowserSignIn } from '../../auth/federation/browser-sign-in.js';
import type { RefreshOutcome, RefreshTokens } from '../../auth/refresh/refresh-grant.js';
import type { ExchangeToken } from '../../auth/federation/exchange.js';
import type { IdpLogout } from '../../auth/federation/backchannel-logout.js';
import type { BrowserSessions } from '../../auth/sessions/browser-sessions.js';
import type { SessionsConfig } from '../../config/schema/sessions.js';
import type { FederationOutcome } from '../../auth/federation/refusals.js';
import type { SecretSealer } from '../../auth/federation/sealed-secrets.js';
import type { SessionGuard } from '../../auth/revocation/sessions.js';
import type { AccountMailDeps } from '../../identity/account-mail.js';
import type { SecondFactors } from '../../auth/factors/second-factor.js';
import type { ClientDeps } from '../../identity/client-deps.js';
import type { PasskeyDeps } from '../../identity/passkey-deps.js';
import type { Mailer } from '../../mail/mailer.js';
import type { Store } from '../../store/types.js';
import type { AuditLog } from '../../store/audit-log.js';
import type { PublicOrigin } from '../public-origin.js';
import type { SignInDeps } from '../sign-in/deps.js';

export interface IdentityRouterDeps {
  store: Store;
  accounts: Accounts;
  authenticate: Authenticate;
  sessions: SessionGuard;
  bruteForce: BruteForceGuard;
  /** The client's address (behind trusted proxies, the one they report). */
  clientIp: (req: IncomingMessage) => string;
  signupEnabled: boolean;
  /**
   * The mailed account flows (`mail`; issue 45): e-mail verification (and,
   * with `signup.verifyEmail`, the refusal of an unverified password
   * sign-in) and password reset; absent: not routed.
   */
  accountMail?: AccountMailDeps | undefined;
  /** The OAuth client-credentials grant (`POST /1/oauth/token`). */
  grantClientToken: GrantClientToken;
  /** Refresh tokens (`tokens.refresh`): issued at Basic login when enabled, their grant and revocation. */
  refreshTokens?: RefreshTokens;
  /** Told of every refresh by outcome (metrics). */
  onRefresh?: (outcome: RefreshOutcome) => void;
  /** The token exchange (RFC 8693) of tenants' providers' ID tokens; absent unless `sso.enabled`. */
  exchangeToken?: ExchangeToken;
  /** The browser sign-in (`/1/tenants/{id}/sso/login`, `/1/sso/callback`); absent unless `sso.enabled`. */
  browserSignIn?: BrowserSignIn;
  /**
   * Browser sessions (`sessions.enabled`): the company sign-in
   * (`GET /1/sign-in/sso`) ends in one, and the session cookie is a caller's
   * credential where an endpoint takes one (`callers.ts`, `sessionOrBearer`);
   * absent: bearer tokens only.
   */
  browserSessions?: BrowserSessions | undefined;
  /** `sessions`: the session cookie's name and attributes. */
  sessionsConfig?: SessionsConfig;
  /**
   * OIDC Back-Channel Logout (`POST /1/sso/backchannel-logout`; `sso.enabled`
   * and `sessions.enabled`): `seen` is filled with the tenant and issuer once known.
   */
  backchannelLogout?: (
    logoutToken: string,
    seen: { tenantId?: string; issuer?: string },
  ) => Promise<IdpLogout>;
  /** `publicUrl`, or the validated origin a request was addressed to: the sign-in callback's origin. */
  publicOrigin?: PublicOrigin;
  /** Told of every token exchange, by outcome (metrics). */
  onFederatedSignIn?: (outcome: FederationOutcome) => void;
  /** Told of every token issued, by principal kind (metrics). */
  onTokenIssued?: (kind: 'user' | 'client') => void;
  /** Told of every Basic login refused: wrong credentials, or throttled (metrics). */
  onLoginRefused?: (reason: 'invalid_credentials' | 'too_many_requests') => void;
  /** Logins, tokens, logouts, signups and password changes are recorded here. */
  audit: AuditRecorder;
  bodyLimit: number;
  /** The machine-client operations' store, audit log and scope bounds (`identity/client-deps.ts`). */
  clients: ClientDeps;
  /** Seals tenants' IdP client secrets (`sso.secretsKeyFile`); undefined: a secret is refused. */
  idpSecrets?: SecretSealer | undefined;
  /** `sso.allowPrivateIssuers`: an IdP set on a non-public address is accepted; default refused. */
  allowPrivateIssuers?: boolean;
  /** TXT records for tenants' domain verification (`sso.dnsServers`). */
  lookupTxt: TxtLookup;
  /** The sign-in page and the sign-out (`api/sign-in/`); absent unless `sessions.enabled`. */
  signIn?: SignInDeps | undefined;
  /**
   * Users' second factors (`mfa.totp.enabled`): `X-OTP` on every Basic login,
   * the TOTP routes, the sign-in page's code step; absent: TOTP is off.
   */
  secondFactors?: SecondFactors | undefined;
  /** `mfa.requiredForAdmins`: an admin without a second factor is refused what needs the role. */
  mfaRequiredForAdmins?: boolean;
  /** The audit streams, read for a tenant's admins (`GET /1/tenants/{t}/audit`). */
  auditLog?: AuditLog | undefined;
  /** Sends the gateway's mail (`mail`); undefined without it: nobody can be invited. */
  mailer?: Mailer | undefined;
  /** `publicUrl`: the origin of every mailed link (never a request's Host). */
  publicUrl?: string | undefined;
  /** The session cookie's name: `sessionCookieName(config.sessions)`. */
  sessionCookieName?: string | undefined;
  /**
   * Passkeys (`mfa.passkeys.enabled`, with `sessions.enabled` and
   * `publicUrl`): registered in a session (`passkey-routes.ts`), signing in on
   * the sign-in page; absent: neither is routed.
   */
  passkeys?: PasskeyDeps | undefined;
}
