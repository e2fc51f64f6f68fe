/**
 * Brute-force protection (config `limits`): failed logins counted per e-mail
 * and per client IP, signups per client IP, on the store so that every
 * instance counts the same attempts. A locked-out key is refused before its
 * password is even checked: a correct password does not help an attacker
 * who is locked out.
 */
import { GatewayError } from '../errors.js';
import type { Store } from '../store/types.js';

export interface BruteForceLimits {
  login: { perEmail: number; perIp: number; windowSeconds: number };
  signup: { perIp: number; windowSeconds: number };
}

export interface BruteForceGuard {
  /** @throws `too_many_requests` while the e-mail or the IP is locked out. */
  beforeLogin(email: string, ip: string): Promise<void>;
  failedLogin(email: string, ip: string): Promise<void>;
  succeededLogin(email: string): Promise<void>;
  /** Counts a signup attempt. @throws `too_many_requests` past the limit. */
  signup(ip: string): Promise<void>;
}

export function createBruteForceGuard(store: Store, limits: BruteForceLimits): BruteForceGuard {
  const { login, signup } = limits;
  const byEmail = store.rateLimiter({
    name: 'login-email',
    points: login.perEmail,
    windowSeconds: login.windowSeconds,
  });
  const byIp = store.rateLimiter({
    name: 'login-ip',
    points: login.perIp,
    windowSeconds: login.windowSeconds,
  });
  const signups = store.rateLimiter({
    name: 'signup-ip',
    points: signup.perIp,
    windowSeconds: signup.windowSeconds,
  });

  return {
    async beforeLogin(email, ip) {
      const [a, b] = await Promise.all([byEmail.retryAfter(email), byIp.retryAfter(ip)]);
      throwIfWaiting(Math.max(a, b), 'Too many failed logins: try again later.');
    },
    async failedLogin(email, ip) {
      await Promise.all([byEmail.hit(email), byIp.hit(ip)]);
    },
    async succeededLogin(email) {
      await byEmail.reset(email);
    },
    async signup(ip) {
      // hit() reports a wait only once the limit is passed: the attempt that
      // uses the last point still goes through.
      const before = await signups.retryAfter(ip);
      throwIfWaiting(before, 'Too many signups from this address: try again later.');
      await signups.hit(ip);
    },
  };
}

function throwIfWaiting(seconds: number, description: string): void {
  if (seconds > 0) {
    throw new GatewayError('too_many_requests', description, {
      headers: { 'retry-after': String(seconds) },
    });
  }
}
