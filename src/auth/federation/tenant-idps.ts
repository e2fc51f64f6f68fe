/**
 * A tenant's identity provider as its admins and the operator set it (issue
 * 34): the checks of what they send (its public view is
 * `api/representations.ts`'). Setting it is `identity/idps.ts`, which the CLI
 * (`tenant idp set|show|remove`) and the API (`/1/tenants/{tenant_id}/idp`)
 * both call, so they accept and refuse the same records.
 *
 * The client secret is write-only: sealed before it reaches the store
 * (`sealed-secrets.ts`), never in a view, an audit event or a log line. A set
 * that leaves it out keeps the stored one while the issuer and client id stay
 * the same (a secret belongs to one client at one IdP); `null` removes it.
 */
import { z } from 'zod';
import { GatewayError } from '../../errors.js';
import { checkPublicHost, PrivateAddressError } from './public-addresses.js';
import { emailDomainOf } from './tenant-domains.js';

const MAX_DOMAINS = 100;

/** Why `value` cannot be an issuer; undefined when it can. */
function issuerProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an https:// URL';
  }
  if (url.protocol !== 'https:' || !value.startsWith('https://')) return 'must be an https:// URL';
  if (/\s/.test(value)) return 'must not hold spaces';
  if (url.username !== '' || url.password !== '') return 'must not hold credentials';
  if (value.includes('?') || value.includes('#'))
    return 'must have no query or fragment (OpenID Connect Discovery §2)';
  return undefined;
}

/**
 * The IdP record as the API takes it (`PUT /1/tenants/{tenant_id}/idp`) and
 * the CLI builds it from its options. The issuer is kept exactly as given:
 * tokens must name it exactly.
 */
export const idpSettingsSchema = z.strictObject({
  issuer: z
    .string()
    .max(1024)
    .superRefine((value, ctx) => {
      const problem = issuerProblem(value);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    }),
  client_id: z
    .string()
    .min(1, 'must not be empty')
    .max(255)
    .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces'),
  client_secret: z.string().min(1, 'must not be empty').max(1024).nullable().optional(),
  domains: z
    .array(emailDomainOf('each must be a DNS name such as example.com'))
    .min(1, 'must name at least one e-mail domain')
    .max(MAX_DOMAINS),
  role: z.enum(['admin', 'member']).default('member'),
  link_existing: z.boolean().default(false),
});

export type IdpSettings = z.output<typeof idpSettingsSchema>;

/**
 * Checks settings the way the API's body is checked.
 * @throws GatewayError `invalid_request` naming the field ("Invalid issuer: …"),
 * the field (`issuer`, `domains.1`) as its `detail`.
 */
export function checkIdpSettings(raw: unknown): IdpSettings {
  const result = idpSettingsSchema.safeParse(raw);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue?.path.length ? issue.path.join('.') : 'body';
  throw new GatewayError('invalid_request', `Invalid ${field}: ${issue?.message ?? 'refused'}.`, {
    detail: field,
  });
}

/**
 * Issue 42 (finding 7): a tenant admin chooses the issuer, and the gateway
 * fetches from it — so without `sso.allowPrivateIssuers` an issuer that is,
 * or resolves to, a loopback, private or other non-public address is refused
 * here, with a clear 400 (the fetcher refuses it again at every connect:
 * `auth/federation/https-json.ts`). The answer never says which address the
 * name resolved to (no view into the operator's DNS).
 * @throws GatewayError `invalid_request` (detail `issuer`).
 */
export async function checkIssuerAddress(issuer: string, allowPrivate: boolean): Promise<void> {
  if (allowPrivate) return;
  try {
    await checkPublicHost(new URL(issuer).hostname);
  } catch (err) {
    if (!(err instanceof PrivateAddressError)) throw err;
    throw new GatewayError(
      'invalid_request',
      'Invalid issuer: it is not on a public address (a loopback, private or other internal network); an operator may allow that with sso.allowPrivateIssuers.',
      { detail: 'issuer', cause: err },
    );
  }
}
