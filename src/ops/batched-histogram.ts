/**
 * A Prometheus histogram whose observations are plain array increments, read
 * by prom-client's registry when `/metrics` is scraped. prom-client's own
 * `observe` validates and hashes the label values on every call (with the
 * labelled counters, 14k instructions of a proxied request, counted with
 * callgrind: `bench/README.md`); here a caller takes a {@link Series}
 * once per label set and observing is a bucket search and three additions,
 * with no allocation.
 *
 * The family is registered as a metric object of prom-client's shape (`name`,
 * `help`, `type`, `get()`), which its registry renders like its own.
 */
import type { Registry } from 'prom-client';

/** One label set's buckets; `observe` is all the hot path calls. */
export class Series {
  /** Per-bucket counts, not cumulative; the last slot is +Inf. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    this.counts[i]! += 1;
    this.sum += value;
    this.count += 1;
  }
}

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

export class BatchedHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** The series of these label values (in `labelNames` order); made on first use. */
  series(...values: string[]): Series {
    const key = values.join('\u0000');
    let found = this.#series.get(key);
    if (found === undefined) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i] ?? ''));
      found = new Series(labels, this.bounds);
      this.#series.set(key, found);
    }
    return found;
  }

  /** prom-client's registry reads this at every scrape. */
  async get(): Promise<{
    name: string;
    help: string;
    type: string;
    aggregator: string;
    values: MetricValue[];
  }> {
    const values: MetricValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const series of this.#series.values()) {
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += series.counts[i] as number;
        values.push({
          labels: { ...series.labels, le: bound },
          value: cumulative,
          metricName: bucket,
        });
      });
      values.push({
        labels: { ...series.labels, le: '+Inf' },
        value: series.count,
        metricName: bucket,
      });
      values.push({
        labels: { ...series.labels },
        value: series.sum,
        metricName: `${this.name}_sum`,
      });
      values.push({
        labels: { ...series.labels },
        value: series.count,
        metricName: `${this.name}_count`,
      });
    }
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values,
    };
  }

  reset(): void {
    this.#series.clear();
  }
}
