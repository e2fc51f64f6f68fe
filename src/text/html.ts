/**
 * Text into HTML: every value a page or a mail echoes (the e-mail typed,
 * `return_to`, a tenant's name) passes here, in text and in attribute values
 * alike, so nothing a request carries can become markup (OWASP XSS
 * Prevention, rules 1 and 2).
 */

const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** `text` with `& < > " ' \`` as character references: safe in element text and quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ENTITIES[c] as string);
}
