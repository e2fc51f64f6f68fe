/**
 * Who is signed in (`GET /1/users/current`): the user, the session's tenant
 * and role, their tenants, their second factors.
 */
import { get } from './api';

export interface TenantOfMine {
  tenant_id: string;
  type: 'usertenant' | 'orgtenant';
  name: string;
  role: 'admin' | 'member';
}

/** The user's second factors; `null`: the gateway does not offer that one. */
export interface SecondFactors {
  totp: { enrolled: boolean; recovery_codes_left: number | null } | null;
  passkeys: { count: number } | null;
}

export interface Me {
  user_id: string;
  user_email: string;
  tenant_id: string;
  tenant_name: string;
  tenant_type: 'usertenant' | 'orgtenant';
  role: 'admin' | 'member';
  scopes: string[];
  tenants: TenantOfMine[];
  second_factors: SecondFactors;
}

export const loadMe = () => get<Me>('/1/users/current');

/** Whether the pages of a tenant's admin are for this user in the session's tenant. */
export const adminHere = (me: Me) => me.role === 'admin' && me.tenant_type === 'orgtenant';
