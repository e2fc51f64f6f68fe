/**
 * The mailer against a real SMTP server (smtp-server on loopback): a mail
 * arrives with its text and HTML bodies, a refused delivery is tried again,
 * one past its last attempt is logged and counted — never its body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailer, type MailOutcome } from '../../src/mail/mailer.js';
import { createSmtpTransport } from '../../src/mail/smtp-transport.js';
import { mailedLink } from '../../src/mail/links.js';
import { startMailInbox, type MailInbox } from '../support/mail-inbox.js';
import pino from 'pino';
import { lineSink } from '../support/log-sink.js';

let inbox: MailInbox;
beforeAll(async () => {
  inbox = await startMailInbox();
});
afterAll(() => inbox.close());

function mailerOf(attempts: number) {
  const sink = lineSink();
  const outcomes: MailOutcome[] = [];
  const config = {
    smtp: inbox.smtpUrl,
    from: 'Gateway <no-reply@gw.example>',
    sendTimeoutMs: 5000,
    attempts,
  };
  const mailer = createMailer({
    config,
    transport: createSmtpTransport(config),
    log: pino({ level: 'info' }, sink.stream),
    onOutcome: (kind, outcome) => {
      expect(kind).toBe('password_reset');
      outcomes.push(outcome);
    },
    backoffMs: () => 10,
  });
  return { mailer, sink, outcomes };
}

const message = (to: string) => ({
  kind: 'password_reset' as const,
  to,
  subject: 'Reset your password',
  text: `Follow ${mailedLink('https://gw.example.com', '/1/password-resets/SECRET-TOKEN')}`,
  html: '<p><a href="https://gw.example.com/1/password-resets/SECRET-TOKEN">Reset</a></p>',
});

describe('mailer', () => {
  it('sends text and HTML with the configured From and SMTP login', async () => {
    const { mailer, outcomes } = mailerOf(3);
    mailer.send(message('ann@example.com'));
    const mail = await inbox.next('ann@example.com');
    expect(mail.from).toBe('no-reply@gw.example');
    expect(mail.subject).toBe('Reset your password');
    expect(mail.links).toEqual(['https://gw.example.com/1/password-resets/SECRET-TOKEN']);
    expect(mail.html).toContain('<a href="https://gw.example.com/1/password-resets/SECRET-TOKEN">');
    expect(mail.login).toEqual({ username: 'gateway', password: 'mail-password' });
    await mailer.close();
    expect(outcomes).toEqual(['sent']);
  });

  it('tries a refused delivery again, and it arrives', async () => {
    const { mailer, outcomes } = mailerOf(3);
    inbox.failNext(2);
    const before = inbox.refused;
    mailer.send(message('bob@example.com'));
    await mailer.idle();
    expect(inbox.refused - before).toBe(2);
    expect((await inbox.next('bob@example.com', { timeoutMs: 100 })).subject).toBe(
      'Reset your password',
    );
    expect(outcomes).toEqual(['sent']);
    await mailer.close();
  });

  it('gives up after its last attempt: logged and counted, the body in neither', async () => {
    const { mailer, sink, outcomes } = mailerOf(2);
    inbox.failNext(2);
    mailer.send(message('cat@example.com'));
    await mailer.idle();
    expect(outcomes).toEqual(['failed']);
    const gaveUp = sink.lines.find((line) => line.msg === 'mail not sent: gave up');
    expect(gaveUp).toMatchObject({ mail: { kind: 'password_reset', domain: 'example.com' } });
    const logged = JSON.stringify(sink.lines);
    expect(logged).toContain('will try again');
    expect(logged).not.toContain('SECRET-TOKEN');
    expect(logged).not.toContain('cat@');
    await expect(inbox.next('cat@example.com', { timeoutMs: 200 })).rejects.toThrow(/no mail/);
    await mailer.close();
  });

  it('never makes the sender wait: send returns before the server answers', async () => {
    const { mailer } = mailerOf(1);
    mailer.send(message('dan@example.com'));
    // Still on this turn of the event loop: nothing can have reached the server.
    expect(inbox.received.some((m) => m.to.includes('dan@example.com'))).toBe(false);
    await inbox.next('dan@example.com');
    await mailer.close();
  });
});
