/**
 * What the mailed account links' endpoints (issue 45) share: their input,
 * read from JSON (a program) or from the account pages' form post (a
 * person's browser, answered with a page), and their refusals shown as a
 * page to a browser.
 */
import type { Router } from '@koa/router';
import type { z } from 'zod';
import { GatewayError } from '../../errors.js';
import { readJsonBody } from '../request-input.js';
import { deadLinkPage } from '../sign-in/account-pages.js';
import { answerLinkPage, LINK_PAGE_HEADERS } from '../sign-in/page-headers.js';
import type { ApiContext, ApiState } from '../state.js';
import { param, readForm } from './oauth-form.js';

const FORM = 'application/x-www-form-urlencoded';

/** Whether the request is an account page's form post (then answered with a page). */
export function isFormPost(ctx: ApiContext): boolean {
  return ctx.is(FORM) === FORM;
}

/**
 * The body as `schema` says, from JSON or from a form (each field once).
 * @throws `invalid_request`, `payload_too_large`
 */
export async function readJsonOrForm<S extends z.ZodType>(
  ctx: ApiContext,
  schema: S,
  limit: number,
): Promise<z.output<S>> {
  if (!isFormPost(ctx)) return readJsonBody(ctx, schema, limit);
  const form = await readForm(ctx, limit);
  const fields = Object.fromEntries([...new Set(form.keys())].map((k) => [k, param(form, k)]));
  const result = schema.safeParse(fields);
  if (!result.success) {
    const field = result.error.issues[0]?.path.join('.') || 'form';
    throw new GatewayError('invalid_request', `Invalid ${field}.`);
  }
  return result.data;
}

/**
 * A refusal of this request, for a browser, as `page(message)` with the
 * link pages' headers (`Referrer-Policy: no-referrer`).
 */
export function refuseAsLinkPage(ctx: ApiContext, page: (error: GatewayError) => string): void {
  ctx.state.page = page;
  ctx.state.pageHeaders = LINK_PAGE_HEADERS;
}

/**
 * `GET path/:token`: the page of a live mailed link (`page(token)`), the link
 * left in place (`live` reads it: a mail scanner's visit uses nothing); a
 * link that is not live is the page saying so, 404.
 */
export function addLinkPageRoute(
  router: Router<ApiState>,
  path: string,
  live: (token: string) => Promise<unknown>,
  page: (token: string) => string,
): void {
  router.get(`${path}/:token`, async (ctx) => {
    refuseAsLinkPage(ctx, (error) => deadLinkPage(error.message));
    const token = ctx.params.token as string;
    await live(token);
    answerLinkPage(ctx, 200, page(token));
  });
}
