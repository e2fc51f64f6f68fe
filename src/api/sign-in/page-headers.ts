/**
 * The headers of every sign-in page, refusals rendered as a page included:
 * no script may run (`default-src 'none'`, nothing inline; with passkeys on,
 * the password form loads the gateway's one script: {@link SCRIPTED_PAGE_CSP}), the one
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

/**
 * The CSP of a page that loads the gateway's own script (the passkey button,
 * issue 45): scripts and the requests they make from this origin only, still
 * nothing inline.
 */
export const SCRIPTED_PAGE_CSP =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; form-action 'self' https:; frame-ancestors 'none'; base-uri 'none'";

/**
 * Answers `html` with `status` and the page headers: the scripted CSP for a
 * page that loads the gateway's script (`ctx.state.pageScript`), and the
 * page's own headers (`ctx.state.pageHeaders`).
 */
export function answerPage(ctx: ApiContext, status: number, html: string): void {
  ctx.status = status;
  ctx.set(PAGE_HEADERS);
  if (ctx.state.pageScript === true) ctx.set('content-security-policy', SCRIPTED_PAGE_CSP);
  if (ctx.state.pageHeaders !== undefined) ctx.set(ctx.state.pageHeaders);
  ctx.body = html;
}

/**
 * What the pages of a mailed link (issue 45) add: their URL holds a one-time
 * token, so no request they lead to carries it in `Referer`, not even to
 * this origin (a proxy's or the stylesheet's access log).
 */
export const LINK_PAGE_HEADERS: Readonly<Record<string, string>> = {
  'referrer-policy': 'no-referrer',
};

/** Answers a mailed link's page: the page headers and {@link LINK_PAGE_HEADERS}. */
export function answerLinkPage(ctx: ApiContext, status: number, html: string): void {
  answerPage(ctx, status, html);
  ctx.set(LINK_PAGE_HEADERS);
}
