/**
 * The gateway's outgoing mail (issue 45): verification links, password
 * resets, invitations. `send` hands a message to a queue and returns at
 * once — a request never waits for the SMTP server — and the queue tries it
 * `mail.attempts` times with a growing pause, then logs and counts it as
 * failed: never lost silently. The log names the kind and the recipient's
 * domain only; a message's text (its one-time link) reaches the SMTP server
 * and nothing else. The SMTP side is handed in (`smtp-transport.ts`, which
 * loads nodemailer: only a gateway with `mail` set loads it).
 */
import type { Logger } from 'pino';
import type { MailConfig } from '../config/schema/mail.js';

/** What a mail is for: the label of `tenant_gateway_mails_total`. */
export const MAIL_KINDS = ['email_verification', 'password_reset', 'invitation'] as const;
export type MailKind = (typeof MAIL_KINDS)[number];

/** How a mail ended: sent, or given up after its last attempt. */
export type MailOutcome = 'sent' | 'failed';

export interface MailMessage {
  kind: MailKind;
  /** One address. */
  to: string;
  /** Never a secret: subjects are logged by mail servers and shown in lists. */
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  /** Queues the message; never throws, never waits for the server. */
  send(message: MailMessage): void;
  /** Resolves once every queued message is sent or given up (tests, shutdown). */
  idle(): Promise<void>;
  /** Waits for the queue (at most `graceMs`), then closes the SMTP connections. */
  close(graceMs?: number): Promise<void>;
}

/** How a send is done: SMTP in the gateway (`createSmtpTransport`); a unit test may pass its own. */
export interface MailTransport {
  send(message: MailMessage, envelope: { from: string; timeoutMs: number }): Promise<void>;
  /** Closes its connections (the mailer's `close`, once the queue is done). */
  close(): void;
}

export interface MailerOptions {
  config: MailConfig;
  log: Logger;
  /** Each mail's end, for the metrics. */
  onOutcome?: (kind: MailKind, outcome: MailOutcome) => void;
  /** How each mail is sent (`createSmtpTransport(config)`). */
  transport: MailTransport;
  /** The pause before attempt n+1 (ms); 1 s, 2 s, 4 s, … by default. */
  backoffMs?: (attempt: number) => number;
}

export function createMailer(options: MailerOptions): Mailer {
  const { config, log } = options;
  const { transport } = options;
  const backoff = options.backoffMs ?? ((attempt) => Math.min(1000 * 2 ** (attempt - 1), 60_000));
  const pending = new Set<Promise<void>>();
  let closed = false;

  const deliver = async (message: MailMessage): Promise<void> => {
    const fields = { kind: message.kind, domain: message.to.split('@').pop() };
    for (let attempt = 1; ; attempt++) {
      try {
        await transport.send(message, { from: config.from, timeoutMs: config.sendTimeoutMs });
        log.info({ mail: fields, attempt }, 'mail sent');
        options.onOutcome?.(message.kind, 'sent');
        return;
      } catch (err) {
        const reason = (err as { code?: unknown }).code ?? (err as Error).name;
        if (attempt >= config.attempts || closed) {
          log.error({ mail: fields, attempt, reason }, 'mail not sent: gave up');
          options.onOutcome?.(message.kind, 'failed');
          return;
        }
        log.warn({ mail: fields, attempt, reason }, 'mail not sent yet: will try again');
        await new Promise((resolve) => setTimeout(resolve, backoff(attempt)).unref());
      }
    }
  };

  return {
    send(message) {
      const delivery = deliver(message).finally(() => pending.delete(delivery));
      pending.add(delivery);
    },
    async idle() {
      while (pending.size > 0) await Promise.all(pending);
    },
    async close(graceMs = 5000) {
      closed = true;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.idle(),
        new Promise((resolve) => (timer = setTimeout(resolve, graceMs).unref())),
      ]);
      clearTimeout(timer);
      transport.close();
    },
  };
}
