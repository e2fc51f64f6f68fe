/** The frame every sign-in page shares: language, viewport, title, the stylesheet, one `main` with its `h1`. */
import { escapeHtml } from '../../text/html.js';
import { STYLESHEET_PATH } from './stylesheet.js';

/** A refusal shown on a page: announced (`role="alert"`) and focused when the page loads. */
export const ALERT_ID = 'sign-in-alert';

/** @param body markup already escaped */
export function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>
`;
}

/** The alert of a refusal, or nothing. `autofocus` moves focus to it without any script. */
export function alert(message: string | undefined): string {
  if (message === undefined) return '';
  return `<p id="${ALERT_ID}" class="alert" role="alert" tabindex="-1" autofocus>${escapeHtml(message)}</p>\n`;
}

/** A hidden field. */
export function hidden(name: string, value: string): string {
  return `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`;
}
