/**
 * The one place where the api turns errors into the JSON error body (or,
 * on a page a browser shows, the page saying it: `ctx.state.page`). Our
 * own errors render as they are; Koa's HTTP errors map to our codes by status;
 * anything else is logged and answered with a bare 500.
 */
import { errorResponse, GatewayError, isGatewayError } from '../errors.js';
import { answerPage } from './sign-in/page-headers.js';
import type { ApiContext, ApiMiddleware } from './state.js';

export function renderErrors(): ApiMiddleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 405) {
        throw new GatewayError('method_not_allowed', `${ctx.method} is not allowed here.`, {
          headers: { allow: ctx.response.get('Allow') },
        });
      }
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new GatewayError('not_found', 'No such endpoint.');
      }
    } catch (err) {
      const error = toGatewayError(err);
      ctx.state.scope.refusal = error;
      if (error.status >= 500) {
        ctx.state.scope.log.error({ err }, 'request failed');
      }
      const rendered = errorResponse(error);
      ctx.status = rendered.status;
      const page = ctx.state.page;
      if (page !== undefined && ctx.accepts('application/json', 'text/html') === 'text/html') {
        ctx.set(pageHeaders(rendered.headers));
        answerPage(ctx, rendered.status, page(error));
        if (ctx.state.pageHeaders !== undefined) ctx.set(ctx.state.pageHeaders);
        return;
      }
      ctx.set(byOwnPage(ctx) ? withoutChallenge(rendered.headers) : rendered.headers);
      ctx.body = rendered.body;
    }
  };
}

/**
 * A refusal's headers on a page: its own (`Retry-After`) kept, the JSON
 * body's dropped, and no `WWW-Authenticate`: a Basic challenge would make
 * the browser open its own password dialog over the page.
 */
function pageHeaders(headers: Record<string, string>): Record<string, string> {
  const {
    'content-type': _type,
    'content-length': _length,
    'www-authenticate': _challenge,
    ...kept
  } = headers;
  return kept;
}

/**
 * Whether the call came from a page of the gateway's own (the console's
 * script): the browser session authenticated it, or the browser says a
 * same-origin script sent it (Fetch Metadata). Its refusal names no Basic
 * challenge, which would open the browser's password dialog over the page
 * (a wrong current password or `X-OTP` on the account page) and hold the
 * call until someone answers it.
 */
function byOwnPage(ctx: ApiContext): boolean {
  if (ctx.state.scope.kind === 'session') return true;
  return ctx.get('sec-fetch-site') === 'same-origin' && ctx.get('sec-fetch-dest') === 'empty';
}

/**
 * A refusal's headers without a Basic challenge (the one that opens the
 * dialog); a Bearer challenge (RFC 6750), which opens none and tells a script
 * why, is kept. As Spring Security answers a script's call, a 401 then
 * names no challenge (RFC 9110 §11.6.1 asks for one): docs/identity-api.md.
 */
function withoutChallenge(headers: Record<string, string>): Record<string, string> {
  const { 'www-authenticate': challenge, ...kept } = headers;
  return challenge === undefined || /^basic\b/i.test(challenge) ? kept : headers;
}

function toGatewayError(err: unknown): GatewayError {
  if (isGatewayError(err)) return err;
  const status = (err as { status?: unknown }).status;
  if (status === 413)
    return new GatewayError('payload_too_large', 'The request body is too large.');
  if (status === 400 || status === 415) {
    return new GatewayError('invalid_request', 'The request body could not be read.');
  }
  return new GatewayError('internal_error', 'The gateway failed to handle this request.', {
    cause: err,
  });
}
