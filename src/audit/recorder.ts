/**
 * Records audit events: one `audit` log line each, then the append to the
 * event's stream in the store. The action an event reports has already
 * happened, so recording never fails it: when the store cannot take the
 * event (Redis down), the event is logged a second time at `error` with the
 * reason, and counted (`tenant_gateway_audit_write_failures_total`).
 */
import type { Logger } from 'pino';
import { lineSafe } from '../text/line-safe.js';
import type { AuditLog } from '../store/audit-log.js';
import {
  auditEvent,
  streamOf,
  type AuditActor,
  type AuditEventKind,
  type AuditSubject,
} from './events.js';

export interface AuditRecorder {
  /** Logs and stores one event; never rejects. */
  record(event: AuditEventKind, actor: AuditActor, subject: AuditSubject): Promise<void>;
}

export function createAuditRecorder(deps: {
  streams: AuditLog;
  /** The process logger: its redaction applies to audit lines as to any other. */
  log: Logger;
  /** Told of every event the store did not take (metrics). */
  onWriteFailure?: () => void;
}): AuditRecorder {
  const { streams, log } = deps;
  return {
    async record(kind, actor, subject) {
      const event = auditEvent(kind, actor, subject);
      log.info({ audit: event }, 'audit');
      try {
        // One line, whatever an e-mail holds: `audit tail` prints it as it is stored.
        await streams.append(streamOf(event), lineSafe(JSON.stringify(event)));
      } catch (err) {
        deps.onWriteFailure?.();
        // At error: the CLI logs errors only, and this line is then the event's one record.
        log.error(
          { audit: event, err: (err as Error).message },
          'audit event not written to the store',
        );
      }
    },
  };
}
