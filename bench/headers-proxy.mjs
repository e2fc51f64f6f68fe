// The bare proxy plus exactly the gateway's header work, from the built
// gateway (src/proxy/decide/header-policy.ts, src/http/request-id.ts): client identity
// headers stripped, the four identity headers injected, X-Request-Id passed or
// made (and answered), X-Forwarded-* set. No token, no tenant check, no
// metrics, no route timeout. Between it and the gateway lies what
// authentication and the rest cost; between the bare proxy and it, what the
// headers DESIGN §2 step 3 requires cost.
// Usage: node headers-proxy.mjs PORT UPSTREAM_URL (after `npm run build`).
import { configSchema } from '../dist/config/index.js';
import { createHeaderPolicy } from '../dist/proxy/decide/header-policy.js';
import { createTrustCheck } from '../dist/proxy/decide/trusted-proxies.js';
import { REQUEST_ID_HEADER, takeRequestId } from '../dist/request-id.js';
import { serveProxy } from './proxy-process.mjs';

const { identityHeaders } = configSchema.parse({});
const policy = createHeaderPolicy(identityHeaders, createTrustCheck([]));
// The values a bench token carries (gateway-config.ts): same lengths on the wire.
const principal = {
  kind: 'user',
  userId: '00000000-0000-4000-8000-000000000000',
  email: 'bench@example.com',
  tenantId: 'bench-org',
  tenantType: 'orgtenant',
  // The bench config maps the roles to no scopes (no `authorization`): `X-Scope` is sent empty.
  scopes: [],
  claims: {},
};

serveProxy((proxyRequest) => (req, res) => {
  const requestId = takeRequestId(req);
  res.setHeader(REQUEST_ID_HEADER, requestId);
  policy.rewrite(req, principal, { requestId, stripAuthorization: false, upgrade: false });
  proxyRequest(req, res);
});
