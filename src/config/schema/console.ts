/**
 * `console` (issue 46): the tenant-admin console at `/console/`, served by
 * the gateway behind the browser session. It calls only the public identity
 * API, with the session cookie, so it needs `sessions`.
 */
import { z } from 'zod';
import { boolean } from './values.js';

export const consoleSection = z
  .strictObject({
    enabled: boolean()
      .default(false)
      .describe(
        "serve the console at `/console/` on the main listener: a signed-in user's account, and for a tenant's admins its members, machine clients, identity provider and audit events. Needs `sessions.enabled`",
      ),
  })
  .meta({
    description: "The tenants' admin console in the browser (`/console/`).",
    examples: [{ enabled: true }],
  })
  .prefault({});

export type ConsoleConfig = z.output<typeof consoleSection>;

/** The console stands on the browser session. */
export function checkConsole(config: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const enabled = (config['console'] as { enabled?: unknown } | undefined)?.enabled;
  const sessions = (config['sessions'] as { enabled?: unknown } | undefined)?.enabled;
  if (enabled === true && Array.isArray(config['routes'])) {
    config['routes'].forEach((route: unknown, i) => {
      const prefix = (route as { prefix?: unknown } | null)?.prefix;
      if (typeof prefix === 'string' && (prefix === '/console' || prefix.startsWith('/console/')))
        ctx.addIssue({
          code: 'custom',
          path: ['routes', i, 'prefix'],
          message: 'is the console’s (console.enabled): choose another prefix',
        });
    });
  }
  if (enabled === true && sessions !== true) {
    ctx.addIssue({
      code: 'custom',
      path: ['console', 'enabled'],
      message: 'needs sessions.enabled: true (the console is used with the browser session)',
    });
  }
}
