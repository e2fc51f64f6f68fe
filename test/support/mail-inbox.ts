/**
 * A real SMTP server on loopback (npm `smtp-server`) that keeps what the
 * gateway sends, parsed (npm `mailparser`), for tests to read and to follow
 * the links of. Point `mail.smtp` at `inbox.smtpUrl`. It offers no STARTTLS
 * (plain SMTP on loopback) and takes any login; `failNext(n)` makes the next
 * n deliveries fail with a 451 (a temporary error the sender retries).
 */
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** The envelope's recipients, lower-cased. */
  to: string[];
  from: string;
  subject: string;
  text: string;
  html: string;
  /** Every http(s) URL in the text body, in order. */
  links: string[];
  /** The SMTP login the sender used, when it logged in. */
  login: { username: string; password: string } | undefined;
}

export interface MailInbox {
  /** `smtp://user:pass@127.0.0.1:<port>` for `mail.smtp`. */
  smtpUrl: string;
  port: number;
  /** Everything received so far, in order. */
  readonly received: readonly ReceivedMail[];
  /**
   * The next mail to `to` not yet taken by `next`, waiting for it up to
   * `timeoutMs` (default 10 s); rejects with what did arrive when none comes.
   */
  next(to: string, options?: { timeoutMs?: number }): Promise<ReceivedMail>;
  /** The next `count` deliveries are answered 451 (retry later). */
  failNext(count: number): void;
  /** Delivery attempts refused by `failNext` so far. */
  readonly refused: number;
  close(): Promise<void>;
}

export async function startMailInbox(): Promise<MailInbox> {
  const received: ReceivedMail[] = [];
  const taken = new Set<ReceivedMail>();
  const waiters = new Set<() => void>();
  let failures = 0;
  let refused = 0;
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: true,
    logger: false,
    onAuth(auth, _session, callback) {
      callback(null, { user: { username: auth.username, password: auth.password } });
    },
    onData(stream, session, callback) {
      if (failures > 0) {
        failures--;
        refused++;
        stream.resume();
        stream.on('end', () =>
          callback(Object.assign(new Error('try again later'), { responseCode: 451 })),
        );
        return;
      }
      simpleParser(stream)
        .then((parsed) => {
          const text = parsed.text ?? '';
          const user = session.user as { username: string; password: string } | undefined;
          received.push({
            to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
            from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
            subject: parsed.subject ?? '',
            text,
            html: typeof parsed.html === 'string' ? parsed.html : '',
            links: [...text.matchAll(/https?:\/\/[^\s<>"')]+/g)].map((m) => m[0]),
            login: user,
          });
          for (const wake of [...waiters]) wake();
          callback();
        })
        .catch((err: Error) => callback(err));
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;

  const take = (to: string) => {
    const mail = received.find((m) => !taken.has(m) && m.to.includes(to.toLowerCase()));
    if (mail !== undefined) taken.add(mail);
    return mail;
  };
  return {
    smtpUrl: `smtp://gateway:mail-password@127.0.0.1:${port}`,
    port,
    received,
    get refused() {
      return refused;
    },
    failNext(count) {
      failures = count;
    },
    next(to, { timeoutMs = 10_000 } = {}) {
      return new Promise((resolve, reject) => {
        const found = take(to);
        if (found !== undefined) return resolve(found);
        const timer = setTimeout(() => {
          waiters.delete(check);
          const seen = received.map((m) => `${m.to.join(',')}: ${m.subject}`).join('; ');
          reject(
            new Error(`no mail to ${to} within ${timeoutMs} ms (received: ${seen || 'none'})`),
          );
        }, timeoutMs);
        const check = () => {
          const mail = take(to);
          if (mail === undefined) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(mail);
        };
        waiters.add(check);
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
