/** A figure over several runs: its median and its range. */
/** A figure over the sets of processes: the median and the range. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

export function spread(values: readonly number[]): Spread {
  const finite = values.filter((v) => Number.isFinite(v));
  return {
    median: median(finite),
    min: finite.length === 0 ? Number.NaN : Math.min(...finite),
    max: finite.length === 0 ? Number.NaN : Math.max(...finite),
  };
}

/** The middle value (the mean of the two middle ones for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}
