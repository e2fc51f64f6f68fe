/**
 * The mailed account flows (issue 45) in the suites about them: a gateway's
 * `mail` pointed at a real SMTP inbox (`mail-inbox.ts`) with `publicUrl`
 * set, the mailed links read and followed on a test gateway (whose socket is
 * not `publicUrl`'s), and the requests a client sends.
 */
import { expect } from 'vitest';
import type { MailInbox, ReceivedMail } from './mail-inbox.js';

/** The gateway's external origin in these suites: every mailed link must be on it. */
export const PUBLIC_URL = 'https://gw.example.test';

/** `mail` at `inbox` and `publicUrl`: with it `signup.verifyEmail` is on unless said otherwise. */
export function mailedConfig(inbox: MailInbox): Record<string, unknown> {
  return {
    publicUrl: PUBLIC_URL,
    mail: { smtp: inbox.smtpUrl, from: 'Gateway <no-reply@gw.example.test>', attempts: 1 },
  };
}

/**
 * The one link of `mail` under `prefix` (`/1/password-resets`), which must
 * be on `publicUrl`; returned as the same path on `base` (the test gateway).
 */
export function followLink(mail: ReceivedMail, prefix: string, base: string): string {
  const links = mail.links.filter((l) => new URL(l).pathname.startsWith(`${prefix}/`));
  expect(links).toHaveLength(1);
  const link = new URL(links[0] as string);
  expect(link.origin).toBe(PUBLIC_URL);
  expect(mail.html).toContain(link.href);
  return `${base}${link.pathname}`;
}

/** The token at the end of a followed link. */
export function tokenOf(url: string): string {
  return url.slice(url.lastIndexOf('/') + 1);
}

/** POST of `url` with `body` as JSON (none: no body). */
export function postJson(url: string, body?: unknown, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** POST /1/password-resets `{email}`. */
export function askReset(base: string, email: string, headers: Record<string, string> = {}) {
  return postJson(`${base}/1/password-resets`, { email }, headers);
}

/** The events of kind `name` in the users' audit stream (events about no tenant). */
export async function userEvents(
  store: {
    auditLog(o: { maxEventsPerStream: number }): {
      read(s: string, from: number): Promise<{ event: string }[]>;
    };
  },
  name: string,
): Promise<Record<string, unknown>[]> {
  const events = await store.auditLog({ maxEventsPerStream: 10_000 }).read('users', 0);
  return events
    .map((e) => JSON.parse(e.event) as Record<string, unknown>)
    .filter((e) => e.event === name);
}

/** The same page headers as the sign-in page, and no `Referer` from a page whose URL holds a token. */
export function expectLinkPage(res: Response): void {
  expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
  expect(res.headers.get('content-security-policy')).toBe(
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self' https:; frame-ancestors 'none'; base-uri 'none'",
  );
  expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  expect(res.headers.get('x-frame-options')).toBe('DENY');
  expect(res.headers.get('cache-control')).toBe('no-store');
}
