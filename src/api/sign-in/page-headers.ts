/**
 * The headers of every sign-in page, refusals rendered as a page included:
 * no script may run (`default-src 'none'`, nothing inline), the one
 * stylesheet comes from this origin, forms post only here, and no other
 * site may frame the page (clickjacking: `frame-ancestors 'none'` and, for
 * browsers before CSP 2, `X-Frame-Options`). Never cached (it carries a
 * form token), and its URL (`return_to`) is not sent as a Referer to
 * another site.
 */
import type { ApiContext } from '../state.js';

export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self' https:; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
};

/** Answers `html` with `status` and the page headers (and the page's own, `ctx.state.pageHeaders`). */
export function answerPage(ctx: ApiContext, status: number, html: string): void {
  ctx.status = status;
  ctx.set(PAGE_HEADERS);
  if (ctx.state.pageHeaders !== undefined) ctx.set(ctx.state.pageHeaders);
  ctx.body = html;
}
