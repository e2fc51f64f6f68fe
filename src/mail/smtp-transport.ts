/**
 * nodemailer's SMTP transport, the mailer's (`mailer.ts`) in a gateway with
 * `mail` set. Its own module: nodemailer takes ~0.1 s of CPU to load, so the
 * core imports it only when `mail` is configured.
 */
import nodemailer from 'nodemailer';
import type { MailConfig } from '../config/schema/mail.js';
import type { MailTransport } from './mailer.js';

/** nodemailer's SMTP transport for `mail.smtp`, pooled; the login read from the URL's userinfo. */
export function createSmtpTransport(config: MailConfig): MailTransport {
  const url = new URL(config.smtp);
  const secure = url.protocol === 'smtps:';
  const user = decodeURIComponent(url.username);
  const transporter = nodemailer.createTransport({
    pool: true,
    maxConnections: 2,
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? (secure ? 465 : 587) : Number(url.port),
    secure,
    ...(user === '' ? {} : { auth: { user, pass: decodeURIComponent(url.password) } }),
    connectionTimeout: config.sendTimeoutMs,
    greetingTimeout: config.sendTimeoutMs,
    socketTimeout: config.sendTimeoutMs,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return {
    send: async (message, { from }) => {
      await transporter.sendMail({
        from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        html: message.html,
      });
    },
    close: () => transporter.close(),
  };
}
