/**
 * The identity fixture with its two seed users signed in, each on the org
 * tenant they belong to apart: Alice for acme, Bob for globex. The two
 * principals the proxy suites send their requests as.
 */
import {
  ALICE,
  BOB,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from './identity-fixture.js';

/** A GET /1/token answer: the access token and the user it names. */
export interface SignedIn {
  access_token: string;
  user_id: string;
  [k: string]: unknown;
}

/** Alice's token for acme, then Bob's for globex, from the gateway at `url`. */
export async function signInAliceAndBob(url: string): Promise<{ alice: SignedIn; bob: SignedIn }> {
  const alice = (await tokenFor(url, ALICE, 'acme')) as SignedIn;
  const bob = (await tokenFor(url, BOB, 'globex')) as SignedIn;
  return { alice, bob };
}

/** `startMemoryIdentityFixture(overrides)`, then Alice and Bob signed in on it. */
export async function startSignedInFixture(
  overrides: Record<string, unknown> = {},
): Promise<{ fx: IdentityFixture; alice: SignedIn; bob: SignedIn }> {
  const fx = await startMemoryIdentityFixture(overrides);
  try {
    return { fx, ...(await signInAliceAndBob(fx.gw.url)) };
  } catch (err) {
    await fx.close();
    throw err;
  }
}
