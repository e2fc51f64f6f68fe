/**
 * The sign-in pages' one stylesheet, served by the gateway as a static file
 * (the pages' CSP is `style-src 'self'`: no inline style). Its name carries
 * its digest, so it is cached for a year and a new version is a new name.
 * Visible focus, readable at 390 px wide, contrast of at least 4.5:1.
 */
import { createHash } from 'node:crypto';

const CSS = `*,*::before,*::after{box-sizing:border-box}
html{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;font-size:100%;line-height:1.5;color:#1b1f24;background:#f3f4f6}
body{margin:0;padding:1rem}
main{max-width:26rem;margin:2rem auto;padding:1.5rem;background:#fff;border:1px solid #c9ced6;border-radius:.5rem}
h1{font-size:1.5rem;margin:0 0 1rem}
h2{font-size:1.125rem;margin:1.5rem 0 .75rem}
form{display:flex;flex-direction:column;gap:.75rem}
label{font-weight:600}
input[type=email],input[type=password]{width:100%;padding:.625rem .75rem;font:inherit;color:#1b1f24;background:#fff;border:1px solid #596270;border-radius:.375rem}
input[aria-invalid=true]{border-color:#a4161a}
fieldset{margin:0;padding:0;border:0;display:flex;flex-direction:column;gap:.5rem}
legend{font-weight:600;margin-bottom:.5rem}
.choice{display:flex;align-items:center;gap:.5rem}
.choice input{width:1.25rem;height:1.25rem;margin:0}
button{padding:.75rem 1rem;font:inherit;font-weight:600;color:#fff;background:#1d4ed8;border:0;border-radius:.375rem;cursor:pointer}
button.secondary{color:#1d4ed8;background:#fff;border:2px solid #1d4ed8}
:focus-visible{outline:3px solid #b45309;outline-offset:2px}
.alert{padding:.75rem;margin:0 0 1rem;color:#7f1d1d;background:#fef2f2;border:1px solid #a4161a;border-radius:.375rem}
.divider{margin:1.5rem 0 0;border:0;border-top:1px solid #c9ced6}
`;

/** The stylesheet's bytes. */
export const STYLESHEET = Buffer.from(CSS, 'utf8');

const DIGEST = createHash('sha256').update(STYLESHEET).digest('base64url').slice(0, 16);

/** Its path under `/1` (the router's prefix): the digest in the name. */
export const STYLESHEET_ROUTE = `/sign-in/style.${DIGEST}.css`;

/** Its path as a page links it. */
export const STYLESHEET_PATH = `/1${STYLESHEET_ROUTE}`;

/** Its ETag: the same digest. */
export const STYLESHEET_ETAG = `"${DIGEST}"`;
