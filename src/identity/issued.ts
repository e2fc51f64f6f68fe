/**
 * A token was issued: the one record of it, whatever the grant (a Basic
 * login at `/1/token`, `refresh_token`, `client_credentials`,
 * `authorization_code`, the token exchange). It names the principal on the
 * request (the outcome record's user, tenant and `principal` label), counts
 * the token by principal kind (`tenant_gateway_tokens_issued_total`) and
 * records the grant's audit event in the tenant's stream. Issue 43: this was
 * copied into each grant, and the copies drifted (a token exchange once
 * counted as `principal="none"`); a grant now says only what it issued.
 */
import type { AuditActor, AuditEventKind, AuditSubject } from '../audit/events.js';
import type { AuditRecorder } from '../audit/recorder.js';
import type { PrincipalKind } from '../auth/credentials/authenticate.js';
import type { AccessTokenClaims } from '../auth/tokens/tokens.js';

export interface IssuedDeps {
  audit: AuditRecorder;
  /** Told of every token issued, by principal kind (metrics). */
  onTokenIssued?: ((kind: 'user' | 'client') => void) | undefined;
}

/** The request a token was issued to, as its front end sees it. */
export interface IssuingRequest {
  /** Names who the request acted for (its outcome record and access line). */
  name(kind: PrincipalKind, id: string, tenantId: string): void;
  /** The audit actor of the request acting as `who` (an e-mail, a client id). */
  actor(who: string): AuditActor;
}

/** The audit event of each user grant: how the token came. */
export type UserTokenEvent = Extract<
  AuditEventKind,
  'token_issued' | 'token_refreshed' | 'federated_sign_in'
>;

/** What was issued, to whom: a grant's result as it has it. */
export type Issue =
  | {
      kind: 'user';
      granted: {
        user: { id: string; email: string };
        tenant: { tenantId: string };
        claims: AccessTokenClaims;
      };
      event: UserTokenEvent;
      /** What the grant adds to its event: the provider's `issuer`, `via: 'browser'`. */
      detail?: Pick<AuditSubject, 'issuer' | 'via'>;
    }
  | {
      kind: 'client';
      granted: {
        client: { clientId: string; tenantId: string };
        claims: AccessTokenClaims;
        /** The scopes granted. */
        scopes: string[];
      };
    };

/** Records `issue`: the principal named on `request`, the metric, the audit event. */
export async function issued(
  deps: IssuedDeps,
  request: IssuingRequest,
  issue: Issue,
): Promise<void> {
  if (issue.kind === 'client') {
    const { client, claims, scopes } = issue.granted;
    const { clientId, tenantId } = client;
    request.name('client', clientId, tenantId);
    deps.onTokenIssued?.('client');
    await deps.audit.record('client_token_issued', request.actor(clientId), {
      tenant_id: tenantId,
      client_id: clientId,
      scopes,
      jti: claims.jti,
    });
    return;
  }
  const { user, tenant, claims } = issue.granted;
  request.name('user', user.id, tenant.tenantId);
  deps.onTokenIssued?.('user');
  await deps.audit.record(issue.event, request.actor(user.email), {
    tenant_id: tenant.tenantId,
    user_id: user.id,
    user_email: user.email,
    ...issue.detail,
    jti: claims.jti,
    ...(claims.fid === undefined ? {} : { family_id: claims.fid }),
  });
}
