/**
 * What the CLI's writes do beyond the store: the sessions they end on running
 * gateways, and the audit events they append (`audit tail`): the suites of
 * ending-sessions.suite.ts, audit-tail.suite.ts, user-sessions.suite.ts and
 * user-factors.suite.ts
 * (the operator's `session list|end` and `user show`), on one redis-server (the
 * shared harness, which this file holds from first to last), each on a case
 * (a key prefix) of its own.
 */
import { afterAll, beforeAll } from 'vitest';
import { releaseCliHarness, sharedCliHarness } from './harness.js';
import './ending-sessions.suite.js';
import './audit-tail.suite.js';
import './user-sessions.suite.js';
import './user-factors.suite.js';

beforeAll(async () => {
  await sharedCliHarness();
});
afterAll(releaseCliHarness);
