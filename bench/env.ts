/** The benchmark's settings from the environment (BENCH_SECONDS and the rest). */

/** The positive integer in `process.env[name]`, or `fallback` when unset; anything else throws. */
export function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  }
  return value;
}
