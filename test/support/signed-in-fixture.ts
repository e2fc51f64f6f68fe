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

/** The fixture and its two users' tokens: Alice's for acme, Bob's for globex. */
export interface SignedInFixture {
  fx: IdentityFixture;
  alice: SignedIn;
  bob: SignedIn;
}

/** `startMemoryIdentityFixture(overrides)`, then Alice and Bob signed in on it. */
export async function startSignedInFixture(
  overrides: Record<string, unknown> = {},
): Promise<SignedInFixture> {
  const fx = await startMemoryIdentityFixture(overrides);
  try {
    const alice = (await tokenFor(fx.gw.url, ALICE, 'acme')) as SignedIn;
    const bob = (await tokenFor(fx.gw.url, BOB, 'globex')) as SignedIn;
    return { fx, alice, bob };
  } catch (err) {
    await fx.close();
    throw err;
  }
}
