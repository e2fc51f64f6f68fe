/**
 * Brute-force and flood protection (config `limits`).
 *
 * Budgets, on the store so that every instance counts the same attempts:
 * wrong passwords per e-mail and per client IP, wrong machine-client secrets
 * per client IP and per client id and IP (never per client id alone: a client
 * id is public, and a budget of its own would let anyone lock the right
 * secret out — issue 42), refused passkeys per client IP (never per e-mail:
 * a credential id is not secret either), signups per client IP. A
 * login reserves one point of each before its password is checked, in one
 * atomic step per counter, and is refused without any bcrypt work when
 * either is spent (counted after the check instead, 44 of 60 concurrent
 * guesses would be checked against `perEmail: 5`). A right password gives back
 * the points its own attempt took, and nothing more: it never erases failures
 * counted by other attempts, so neither the owner's login nor an attacker's
 * own account can reset a budget an attacker is spending.
 *
 * Queue bounds, in this process: logins of one e-mail or one client IP that
 * are waiting for or running on the bcrypt pool. Past them 429 at once, so
 * one client's flood cannot hold the FIFO pool queue in front of everyone
 * else's login (a 60-login flood delayed another user's by 24.9 s).
 */
import { GatewayError } from '../../errors.js';
import type { LoginCounter, Reservation } from '../../store/login-counters.js';
import type { Store } from '../../store/types.js';

export interface BruteForceLimits {
  login: {
    perEmail: number;
    perIp: number;
    windowSeconds: number;
    /** Logins of one e-mail waiting for or running on this instance's bcrypt pool. */
    maxQueuedPerEmail: number;
    /** The same per client IP. */
    maxQueuedPerIp: number;
  };
  signup: { perIp: number; windowSeconds: number };
  /** Browser sign-ins started per client IP (each writes a pending sign-in to the store); absent: unbounded. */
  ssoLogin?: { perIp: number; windowSeconds: number };
  /** Token exchanges and browser sign-in requests per client IP (each may fetch from an IdP); absent: unbounded. */
  exchange?: { perIp: number; windowSeconds: number };
}

/** How a login attempt ended, for {@link LoginAttempt.end}. */
export type LoginOutcome =
  /** Wrong password or unknown e-mail: the points stay spent. */
  | 'failed'
  /** Right password: this attempt's points are given back. */
  | 'succeeded'
  /** No verdict was reached (client gone, store failed): the points are given back. */
  | 'abandoned';

/** A login admitted by {@link BruteForceGuard.beginLogin}; end it exactly once. */
export interface LoginAttempt {
  /** Frees the queue places and settles the points; never throws. */
  end(outcome: LoginOutcome): Promise<void>;
}

export interface BruteForceGuard {
  /**
   * Takes a queue place and a point of each login budget.
   * @throws `too_many_requests` (with Retry-After) when a bound or a budget is
   * reached; nothing is taken then.
   */
  beginLogin(email: string, ip: string): Promise<LoginAttempt>;
  /**
   * A machine client's secret: takes a point of the client IP's login budget
   * and of the budget of this client id from this IP (`perEmail` points). A
   * client id is public, so no budget is the id's alone: wrong secrets lock
   * out the address they come from, never the right secret from another.
   * @throws `too_many_requests` (with Retry-After) when a budget is spent;
   * nothing is taken then.
   */
  beginClientLogin(clientId: string, ip: string): Promise<LoginAttempt>;
  /**
   * A passkey's assertion on the sign-in page: takes a point of the client
   * IP's login budget, the one its wrong passwords spend too. No e-mail's
   * budget: a credential id is not secret, so failures posted with it must
   * not lock its user out from anywhere else.
   * @throws `too_many_requests` (with Retry-After) when the budget is spent;
   * nothing is taken then.
   */
  beginPasskeyLogin(ip: string): Promise<LoginAttempt>;
  /** Takes a point of the signup budget. @throws `too_many_requests` when spent. */
  signup(ip: string): Promise<void>;
  /** Takes a point of the browser sign-in budget. @throws `too_many_requests` when spent. */
  ssoLogin(ip: string): Promise<void>;
  /** Takes a point of the IdP-reaching budget (`limits.exchange`). @throws `too_many_requests` when spent. */
  exchange(ip: string): Promise<void>;
}

function counters(store: Pick<Store, 'loginCounter'>, limits: BruteForceLimits) {
  const { login, signup, ssoLogin, exchange } = limits;
  const counter = (name: string, points: number, windowSeconds: number) =>
    store.loginCounter({ name, points, windowSeconds });
  return {
    byEmail: counter('login-email', login.perEmail, login.windowSeconds),
    byClientAndIp: counter('login-client-ip', login.perEmail, login.windowSeconds),
    byIp: counter('login-ip', login.perIp, login.windowSeconds),
    signups: counter('signup-ip', signup.perIp, signup.windowSeconds),
    ssoLogins:
      ssoLogin === undefined
        ? undefined
        : counter('sso-login-ip', ssoLogin.perIp, ssoLogin.windowSeconds),
    exchanges:
      exchange === undefined
        ? undefined
        : counter('exchange-ip', exchange.perIp, exchange.windowSeconds),
  };
}

export function createBruteForceGuard(
  store: Pick<Store, 'loginCounter'>,
  limits: BruteForceLimits,
): BruteForceGuard {
  const { login } = limits;
  const { byEmail, byIp, byClientAndIp, signups, ssoLogins, exchanges } = counters(store, limits);
  const queuedByEmail = createPlaces(login.maxQueuedPerEmail);
  const queuedByIp = createPlaces(login.maxQueuedPerIp);

  return {
    async beginLogin(email, ip) {
      if (!queuedByEmail.available(email) || !queuedByIp.available(ip)) {
        // Places free up as the queued checks finish: a few bcrypt runs, well under a second.
        throw tooMany(
          1,
          'Too many logins in progress for this account or address: try again shortly.',
        );
      }
      queuedByEmail.take(email);
      queuedByIp.take(ip);
      const release = () => {
        queuedByEmail.give(email);
        queuedByIp.give(ip);
      };
      try {
        // The address first: a refused address then creates no e-mail counter.
        return settledOnEnd(await reserveBoth([byIp, ip], [byEmail, email]), release);
      } catch (err) {
        release();
        throw err;
      }
    },

    // No queue place: a client's secret costs a digest, not bcrypt work. And
    // no budget of the id alone (issue 42): the id is public.
    async beginClientLogin(clientId, ip) {
      const points = await reserveBoth([byIp, ip], [byClientAndIp, `${ip} ${clientId}`]);
      return settledOnEnd(points, () => undefined);
    },

    // No queue place either: an assertion costs a signature check, not bcrypt work.
    async beginPasskeyLogin(ip) {
      const point = await byIp.reserve(ip);
      if (!point.granted) throw tooMany(point.retryAfter, FAILED_LOGINS);
      return settledOnEnd([point], () => undefined);
    },

    async signup(ip) {
      const point = await signups.reserve(ip);
      if (!point.granted) {
        throw tooMany(point.retryAfter, 'Too many signups from this address: try again later.');
      }
    },

    async ssoLogin(ip) {
      const point = await ssoLogins?.reserve(ip);
      if (point !== undefined && !point.granted)
        throw tooMany(point.retryAfter, 'Too many sign-ins from this address: try again later.');
    },

    async exchange(ip) {
      const point = await exchanges?.reserve(ip);
      if (point !== undefined && !point.granted)
        throw tooMany(
          point.retryAfter,
          'Too many sign-ins through identity providers from this address: try again later.',
        );
    },
  };
}

type GrantedPoint = Extract<Reservation, { granted: true }>;

/**
 * A point of `first`'s budget, then of `second`'s; refused by either, nothing
 * stays taken.
 * @throws `too_many_requests` (with Retry-After); the store's error
 */
async function reserveBoth(
  [firstCounter, firstKey]: [LoginCounter, string],
  [secondCounter, secondKey]: [LoginCounter, string],
): Promise<GrantedPoint[]> {
  const first = await firstCounter.reserve(firstKey);
  if (!first.granted) throw tooMany(first.retryAfter, FAILED_LOGINS);
  const second = await secondCounter.reserve(secondKey).catch(async (err: unknown) => {
    await first.refund().catch(() => undefined);
    throw err;
  });
  if (!second.granted) {
    await first.refund().catch(() => undefined);
    throw tooMany(second.retryAfter, FAILED_LOGINS);
  }
  return [first, second];
}

/** The attempt that keeps `points` when it failed and gives them back otherwise; `release` runs once at its end. */
function settledOnEnd(points: GrantedPoint[], release: () => void): LoginAttempt {
  let ended = false;
  return {
    async end(outcome) {
      if (ended) return;
      ended = true;
      release();
      if (outcome === 'failed') return;
      // Best effort: a refund the store cannot take leaves the attempt
      // counted, which errs on the safe side.
      await Promise.all(points.map((point) => point.refund())).catch(() => undefined);
    },
  };
}

const FAILED_LOGINS = 'Too many failed logins: try again later.';

/** Counts places in use per key; a key with none in use holds no memory. */
function createPlaces(max: number) {
  const used = new Map<string, number>();
  return {
    available: (key: string) => (used.get(key) ?? 0) < max,
    take: (key: string) => used.set(key, (used.get(key) ?? 0) + 1),
    give(key: string) {
      const n = (used.get(key) ?? 0) - 1;
      if (n > 0) used.set(key, n);
      else used.delete(key);
    },
  };
}

function tooMany(seconds: number, description: string): GatewayError {
  return new GatewayError('too_many_requests', description, {
    headers: { 'retry-after': String(seconds) },
  });
}
