/**
 * Every operation of the gateway's own HTTP API, in the order of the
 * document's paths: the identity API, the well-known documents and
 * forward-auth's `/auth/verify`. Each is declared in its group's file.
 */
import * as accounts from './account-operations.js';
import * as clients from './client-operations.js';
import { getCurrentUser, listTenantAudit, switchSessionTenant } from './console-operations.js';
import * as domains from './domain-operations.js';
import { verifyOperations } from './forward-auth-operations.js';
import * as idps from './idp-operations.js';
import * as members from './member-operations.js';
import type { Operation } from './operation.js';
import { postSignIn, showSignIn, signOut } from './sign-in-operations.js';

import { endSession, listSessions } from './session-operations.js';
import * as passkeys from './passkey-operations.js';
import { ssoCallback, ssoLogin } from './sso-operations.js';
import { backchannelLogout, companySignIn } from './sso-session-operations.js';
import { getTenant, listUserTenants } from './tenant-operations.js';
import * as tokens from './token-operations.js';
import { changePassword, signUp } from './user-operations.js';
import { confirmTotp, enrolTotp, removeTotp } from './totp-operations.js';
import { getJwks, getOAuthMetadata, getOpenApi } from './well-known-operations.js';

export const OPERATIONS: readonly Operation[] = [
  getCurrentUser,
  listUserTenants,
  tokens.issueToken,
  tokens.revokeToken,
  tokens.issueTokenOAuth,
  tokens.oauthToken,
  tokens.oauthRevoke,
  getTenant,
  clients.listClients,
  clients.createClient,
  clients.getClient,
  clients.removeClient,
  clients.rotateClientSecret,
  clients.listApiKeys,
  clients.createApiKey,
  clients.removeApiKey,
  idps.getTenantIdp,
  idps.setTenantIdp,
  idps.removeTenantIdp,
  domains.listTenantDomains,
  domains.addTenantDomain,
  domains.removeTenantDomain,
  domains.verifyTenantDomain,
  listTenantAudit,
  members.listTenantMembers,
  members.setTenantMemberRole,
  members.removeTenantMember,
  members.listInvitations,
  members.createInvitation,
  members.revokeInvitation,
  members.acceptInvitation,
  members.showInvitation,
  members.postInvitation,
  ssoLogin,
  ssoCallback,
  showSignIn,
  postSignIn,
  signOut,
  companySignIn,
  backchannelLogout,
  signUp,
  changePassword,
  accounts.showEmailVerification,
  accounts.confirmEmail,
  accounts.showPasswordResetRequest,
  accounts.requestPasswordReset,
  accounts.showPasswordReset,
  accounts.resetPassword,
  enrolTotp,
  confirmTotp,
  removeTotp,
  listSessions,
  switchSessionTenant,
  endSession,
  passkeys.passkeyOptions,
  passkeys.listPasskeys,
  passkeys.registerPasskey,
  passkeys.removePasskey,
  passkeys.passkeySignInOptions,
  getJwks,
  getOAuthMetadata,
  getOpenApi,
  ...verifyOperations,
];
