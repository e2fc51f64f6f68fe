/**
 * An org tenant's machine clients, members' roles, identity provider and
 * e-mail domains as an operator sets them with the CLI: the suites of
 * clients.suite.ts, idp.suite.ts and domains.suite.ts, on one redis-server
 * (the shared harness, which this file holds from first to last), each on a
 * case (a key prefix) of its own.
 */
import { afterAll, beforeAll } from 'vitest';
import { releaseCliHarness, sharedCliHarness } from './harness.js';
import './clients.suite.js';
import './idp.suite.js';
import './domains.suite.js';

beforeAll(async () => {
  await sharedCliHarness();
});
afterAll(releaseCliHarness);
