/**
 * What the CLI's writes do beyond the store: the sessions they end on running
 * gateways, and the audit events they append (`audit tail`): the suites of
 * ending-sessions.suite.ts and audit-tail.suite.ts, on one redis-server (the
 * shared harness), each on a case (a key prefix) of its own.
 */
import './ending-sessions.suite.js';
import './audit-tail.suite.js';
