/**
 * The page of a mailed invitation link (issue 45): `GET /1/invitations/:token`
 * shows it (the sign-in pages' headers and CSP, plus `Referrer-Policy:
 * no-referrer`: the token is in its URL); `POST` with its form accepts as the
 * signed-in session (`action=accept`) or creates the invited account, verified,
 * and joins (`action=sign-up`). A post must come from the gateway's own origin
 * (403 `csrf_refused`). Refusals are pages for a browser, JSON otherwise; the
 * operations are `identity/invitations.ts`.
 */
import type { Router } from '@koa/router';
import { GatewayError } from '../../errors.js';
import { isSameOrigin } from '../../http/same-origin.js';
import {
  acceptInvitation,
  pendingInvitation,
  signUpByInvitation,
} from '../../identity/invitations.js';
import type { InvitationRecord } from '../../store/types.js';
import { cookieValues } from '../../text/cookies.js';
import { actor } from '../identity/callers.js';
import type { IdentityRouterDeps } from '../identity/deps.js';
import { invitee } from '../identity/invitation-routes.js';
import { param, readForm, requiredParam } from '../identity/oauth-form.js';
import { messageFor } from '../sign-in/messages.js';
import { answerPage } from '../sign-in/page-headers.js';
import { requestOrigin } from '../sign-in/request-origin.js';
import type { ApiContext, ApiState } from '../state.js';
import {
  invitationPage,
  invitationRefusedPage,
  joinedPage,
  type InvitationStep,
} from './invitation-page.js';

const NO_REFERRER = { 'referrer-policy': 'no-referrer' };

export function addInvitationPageRoutes(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  router.get('/invitations/:token', async (ctx) => {
    const { record, tenantName } = await opened(deps, ctx);
    const step = await stepFor(deps, ctx, record);
    answerPage(ctx, 200, invitationPage(viewOf(ctx, record, tenantName, step)));
  });
  router.post('/invitations/:token', async (ctx) => {
    const { record, tenantName } = await opened(deps, ctx);
    if (!isSameOrigin(ctx.req.headers, requestOrigin(deps.publicOrigin, ctx.req))) {
      throw new GatewayError('csrf_refused', 'The form was posted from another site.');
    }
    const form = await readForm(ctx, deps.bodyLimit);
    const token = ctx.params.token as string;
    if (param(form, 'action') === 'sign-up') {
      ctx.state.page = (error) =>
        invitationPage({
          ...viewOf(ctx, record, tenantName, { kind: 'sign-up' }),
          error: invitationMessage(error),
        });
      const password = requiredParam(form, 'password');
      const self = { kind: 'self', audit: actor(deps, ctx, record.email) } as const;
      await signUpByInvitation(deps, self, token, password);
    } else {
      const user = await invitee(deps, ctx);
      await acceptInvitation(
        deps,
        { kind: 'self', audit: actor(deps, ctx, user.email) },
        token,
        user,
      );
    }
    answerPage(ctx, 200, joinedPage(tenantName, record.role, signInUrl(deps, record.tenantId)));
  });
}

/** The pending invitation of the path's token and its tenant's name; refusals shown as a page from here on. */
async function opened(
  deps: IdentityRouterDeps,
  ctx: ApiContext,
): Promise<{ record: InvitationRecord; tenantName: string }> {
  ctx.state.pageHeaders = NO_REFERRER;
  ctx.state.page = (error) => invitationRefusedPage(invitationMessage(error));
  const record = await pendingInvitation(deps, ctx.params.token as string);
  const tenant = await deps.store.tenants.getTenant(record.tenantId);
  if (tenant === null) throw new GatewayError('not_found', 'The tenant no longer exists.');
  return { record, tenantName: tenant.name };
}

function viewOf(
  ctx: ApiContext,
  record: InvitationRecord,
  tenantName: string,
  step: InvitationStep,
) {
  return { path: ctx.path, tenantName, role: record.role, email: record.email, step };
}

/** What the visitor can do: by their session (when signed in), else by whether the address has an account. */
async function stepFor(
  deps: IdentityRouterDeps,
  ctx: ApiContext,
  record: InvitationRecord,
): Promise<InvitationStep> {
  const back = signInUrl(deps, undefined, ctx.path);
  const signedInAs = await sessionEmail(deps, ctx);
  if (signedInAs === record.email) return { kind: 'accept' };
  if (signedInAs !== undefined) return { kind: 'other-account', signedInAs, signInUrl: back };
  if ((await deps.store.users.findUserByEmail(record.email)) !== null) {
    return { kind: 'sign-in', signInUrl: back };
  }
  return { kind: 'sign-up' };
}

/** The e-mail of the browser's session, when it has a live one. */
async function sessionEmail(
  deps: IdentityRouterDeps,
  ctx: ApiContext,
): Promise<string | undefined> {
  const name = deps.sessionCookieName;
  if (deps.browserSessions === undefined || name === undefined) return undefined;
  const values = cookieValues(ctx.req.headers.cookie, name);
  if (values.length !== 1) return undefined;
  try {
    return (await deps.browserSessions.principal(values[0] as string)).email;
  } catch {
    // An ended or unknown session: the visitor is not signed in.
    return undefined;
  }
}

/** The sign-in page (when `sessions.enabled`), back to `returnTo`. */
function signInUrl(
  deps: IdentityRouterDeps,
  tenantId: string | undefined,
  returnTo = '/',
): string | undefined {
  if (deps.signIn === undefined) return undefined;
  const query = new URLSearchParams({ return_to: returnTo });
  if (tenantId !== undefined) query.set('tenant_id', tenantId);
  return `/1/sign-in?${query.toString()}`;
}

/** The codes whose description is written for the invitee (`identity/invitations.ts`). */
const OWN_WORDS = new Set(['not_found', 'forbidden', 'email_not_verified', 'user_exists']);

/** A refusal in words for the invitee. */
function invitationMessage(error: GatewayError): string {
  if (error.status < 500 && OWN_WORDS.has(error.code)) return error.message;
  return messageFor(error);
}
