// Runs in a worker thread of the password pool (see passwords.ts): bcrypt is
// pure CPU, so it runs here, synchronously, and never stalls the event loop
// that serves proxied traffic. Plain JavaScript so that Node loads it as is,
// from src/ in tests and from dist/ in production.
import bcrypt from 'bcryptjs';

/** @param {{ password: string, cost: number }} task */
export function hash({ password, cost }) {
  return bcrypt.hashSync(password, cost);
}

/** @param {{ password: string, hash: string }} task */
export function compare({ password, hash }) {
  return bcrypt.compareSync(password, hash);
}
