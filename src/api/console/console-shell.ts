/**
 * The console's one HTML page: the same shell for every deep link
 * (`/console/tenants/{t}/members`, …); the script reads the path and draws
 * the page, calling only the public identity API. Its headers: the script and
 * stylesheet from this origin only, nothing inline, never framed, never
 * cached (it is the signed-in user's).
 */
import type { ConsoleAssets } from './console-assets.js';

export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
};

export function consoleShell(assets: ConsoleAssets): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Console — tenant-gateway</title>
<link rel="stylesheet" href="${assets.stylePath}">
<script type="module" src="${assets.scriptPath}"></script>
</head>
<body>
<div id="app"><main class="page"><p role="status">Loading…</p></main></div>
<noscript><main class="page"><p>The console needs JavaScript. Everything it does, the identity API does too.</p></main></noscript>
</body>
</html>
`;
}
