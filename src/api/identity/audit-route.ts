/**
 * `GET /1/tenants/:tenant_id/audit`: the tenant's audit events for its
 * admins (the console's audit page), newest first, filtered and paged
 * (`identity/tenant-audit.ts`).
 */
import type { Router } from '@koa/router';
import { readTenantAudit } from '../../identity/tenant-audit.js';
import { readQuery } from '../request-input.js';
import { AuditQuery } from '../schemas/audit.js';
import type { ApiState } from '../state.js';
import { noStore } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';
import { tenantAdmin } from './tenant-admins.js';

export function addAuditRoute(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  const log = deps.auditLog;
  if (log === undefined) return;
  router.get('/tenants/:tenant_id/audit', async (ctx) => {
    const admin = await tenantAdmin(deps, ctx, {
      what: 'its audit events',
      orgOnly: 'Audit events are read for org tenants only.',
    });
    const query = readQuery(ctx, AuditQuery);
    const page = await readTenantAudit(log, admin.tenantId, query);
    noStore(ctx);
    ctx.body = { events: page.events, next: page.next ?? null, types: page.types };
  });
}
