/**
 * The forward-auth entry way (`/auth/verify`): the admission pipeline's
 * verdict (`decide/pipeline.ts`) on the request the ingress asks about,
 * answered as a 200 carrying the identity headers, or as the refusal. It
 * decides nothing itself.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestScope } from '../http/scope.js';
import type { NormalisedTarget } from './decide/normalise-path.js';
import { decide, verifiedHeaders, type Admission } from './decide/pipeline.js';

/** Answers the ingress; a refusal rejects to the caller's `fail`. */
export async function verifyRequest(
  deps: Admission,
  req: IncomingMessage,
  res: ServerResponse,
  scope: RequestScope,
  target: NormalisedTarget,
): Promise<void> {
  const principal = await decide(deps, req, target, scope);
  res
    .writeHead(
      200,
      verifiedHeaders(
        deps.settings.headers,
        principal,
        req.headers.authorization,
        req.headers.cookie,
      ),
    )
    .end();
}
