/**
 * The identity endpoints (docs/identity-api.md): tenant list, token (and its OAuth
 * alias), tenant record, signup, password change, logout. `current` stands for
 * the caller's own user or tenant id in any path.
 */
import type { IncomingMessage } from 'node:http';
import { Router } from '@koa/router';
import { z } from 'zod';
import type { AuditActor } from '../audit/events.js';
import type { AuditRecorder } from '../audit/recorder.js';
import type { Accounts } from '../auth/accounts.js';
import type { Authenticate, Principal } from '../auth/authenticate.js';
import { parseBasicAuthorization } from '../auth/basic.js';
import type { BruteForceGuard } from '../auth/brute-force.js';
import type { SessionGuard } from '../auth/sessions.js';
import { GatewayError, isGatewayError } from '../errors.js';
import { normaliseEmail } from '../store/normalise.js';
import type { Store, UserRecord } from '../store/types.js';
import { tenantRecord, tenantSummary } from './representations.js';
import { readJsonBody, singleQueryParam } from './request-input.js';
import type { ApiContext, ApiState } from './state.js';

export interface IdentityRouterDeps {
  store: Store;
  accounts: Accounts;
  authenticate: Authenticate;
  sessions: SessionGuard;
  bruteForce: BruteForceGuard;
  /** The client's address (behind trusted proxies, the one they report). */
  clientIp: (req: IncomingMessage) => string;
  signupEnabled: boolean;
  /** Told of every token issued (metrics). */
  onTokenIssued?: () => void;
  /** Told of every Basic login refused: wrong credentials, or throttled (metrics). */
  onLoginRefused?: (reason: 'invalid_credentials' | 'too_many_requests') => void;
  /** Logins, tokens, logouts, signups and password changes are recorded here. */
  audit: AuditRecorder;
  bodyLimit: number;
}

const signupBody = z.strictObject({
  email: z.string(),
  password: z.string(),
  name: z.string().max(200).optional(),
});

const passwordBody = z.strictObject({ password: z.string() });

export function createIdentityRouter(deps: IdentityRouterDeps): Router<ApiState> {
  const { store, accounts, authenticate, bodyLimit, audit } = deps;
  const router = new Router<ApiState>({ prefix: '/1' });

  /** The audit actor of a request acting as `email`. */
  const actor = (ctx: ApiContext, email: string): AuditActor => ({
    source: 'api',
    actor: email,
    client_ip: deps.clientIp(ctx.req),
    request_id: ctx.state.scope.requestId,
  });

  /** The Basic-authenticated user. */
  async function logIn(ctx: ApiContext): Promise<UserRecord> {
    const authorization = ctx.get('authorization') || undefined;
    try {
      const user = await accounts.logIn(authorization, deps.clientIp(ctx.req), abandoned(ctx));
      ctx.state.scope.userId = user.id;
      await audit.record('login_succeeded', actor(ctx, user.email), {
        user_id: user.id,
        user_email: user.email,
      });
      return user;
    } catch (err) {
      if (
        isGatewayError(err) &&
        (err.code === 'invalid_credentials' || err.code === 'too_many_requests')
      ) {
        deps.onLoginRefused?.(err.code);
        await auditRefusedLogin(ctx, authorization, err.code);
      }
      throw err;
    }
  }

  /**
   * A refused login is recorded when it tried an e-mail: a request without
   * (readable) Basic credentials tried nobody's password.
   */
  async function auditRefusedLogin(
    ctx: ApiContext,
    authorization: string | undefined,
    code: 'invalid_credentials' | 'too_many_requests',
  ): Promise<void> {
    let email: string;
    try {
      email = normaliseEmail(parseBasicAuthorization(authorization).email);
    } catch {
      return;
    }
    const kind = code === 'invalid_credentials' ? 'login_failed' : 'login_locked_out';
    await audit.record(kind, actor(ctx, email), { user_email: email });
  }

  /** Basic-authenticated user whose id (or `current`) is in the path. */
  async function pathUser(ctx: ApiContext, userIdInPath: string): Promise<UserRecord> {
    const user = await logIn(ctx);
    if (userIdInPath !== 'current' && userIdInPath !== user.id) {
      throw new GatewayError('forbidden', 'The path names another user.');
    }
    return user;
  }

  async function bearer(ctx: ApiContext): Promise<Principal> {
    const principal = await authenticate(ctx.get('authorization') || undefined);
    ctx.state.scope.userId = principal.userId;
    ctx.state.scope.tenantId = principal.tenantId;
    return principal;
  }

  router.get('/users/:user_id/tenants', async (ctx) => {
    const user = await pathUser(ctx, ctx.params.user_id as string);
    const tenants = await store.listUserTenants(user.id);
    noStore(ctx);
    ctx.body = {
      tenants: tenants.map(tenantSummary),
    };
  });

  const issueToken = async (ctx: ApiContext) => {
    const tenantId = singleQueryParam(ctx, 'tenant_id');
    const user = await logIn(ctx);
    const { token, claims, tenant } = await accounts.grantToken(user, tenantId);
    ctx.state.scope.tenantId = tenant.tenantId;
    deps.onTokenIssued?.();
    await audit.record('token_issued', actor(ctx, user.email), {
      tenant_id: tenant.tenantId,
      user_id: user.id,
      user_email: user.email,
      jti: claims.jti,
    });
    noStore(ctx);
    ctx.set('pragma', 'no-cache');
    ctx.body = {
      access_token: token,
      token_type: 'Bearer',
      expires_in: claims.exp - claims.iat,
      user_email: user.email,
      user_id: user.id,
      tenant_id: tenant.tenantId,
      tenant_name: tenant.name,
      tenant_type: tenant.type,
    };
  };
  router.get('/token', issueToken);
  router.get('/oauth/token', issueToken);

  router.delete('/token', async (ctx) => {
    const principal = await bearer(ctx);
    await deps.sessions.revoke(principal.claims);
    await audit.record('logout', actor(ctx, principal.email), {
      tenant_id: principal.tenantId,
      user_id: principal.userId,
      user_email: principal.email,
      jti: principal.claims.jti,
    });
    ctx.status = 204;
  });

  router.get('/tenants/:tenant_id', async (ctx) => {
    const principal = await bearer(ctx);
    const tenantId = ctx.params.tenant_id as string;
    if (tenantId !== 'current' && tenantId !== principal.tenantId) {
      throw new GatewayError('tenant_mismatch', "The path names a tenant other than the token's.", {
        detail: tenantId,
      });
    }
    const tenant = await store.getTenant(principal.tenantId);
    if (tenant === null) throw new GatewayError('not_found', 'The tenant no longer exists.');
    noStore(ctx);
    ctx.body = tenantRecord(tenant);
  });

  router.post('/users', async (ctx) => {
    if (!deps.signupEnabled) throw new GatewayError('forbidden', 'Signup is disabled.');
    await deps.bruteForce.signup(deps.clientIp(ctx.req));
    const body = await readJsonBody(ctx, signupBody, bodyLimit);
    const user = await accounts.signUp(body);
    await audit.record('user_created', actor(ctx, user.email), {
      tenant_id: user.personalTenantId,
      user_id: user.id,
      user_email: user.email,
    });
    noStore(ctx);
    ctx.status = 201;
    ctx.body = { user_id: user.id, user_email: user.email, tenant_id: user.personalTenantId };
  });

  router.put('/users/:user_id/password', async (ctx) => {
    const user = await pathUser(ctx, ctx.params.user_id as string);
    const body = await readJsonBody(ctx, passwordBody, bodyLimit);
    await accounts.changePassword(user, body.password);
    await audit.record('password_changed', actor(ctx, user.email), {
      user_id: user.id,
      user_email: user.email,
    });
    ctx.status = 204;
  });

  return router;
}

/** Aborts when the client hangs up before the response is written. */
function abandoned(ctx: ApiContext): AbortSignal {
  const controller = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) controller.abort();
  });
  return controller.signal;
}

function noStore(ctx: ApiContext): void {
  ctx.set('cache-control', 'no-store');
}
