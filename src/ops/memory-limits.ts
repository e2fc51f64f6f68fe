/**
 * The two ceilings the gateway's memory runs into, exported as metrics so
 * that an alert can compare what is used with them, whatever runs the
 * gateway: the memory the process may use (its cgroup's limit — a
 * container's `limits.memory` — else the machine's RAM), past which the
 * kernel kills it; and V8's heap limit (the image's
 * `--max-old-space-size-percentage`, else V8's own sizing from that same
 * memory), past which it ends with "JavaScript heap out of memory".
 */
import { totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { Gauge, type Registry } from 'prom-client';

/**
 * The memory this process may use, in bytes. Without a limit Node reports 0
 * or the cgroup's "max" (2^63 and up), depending on the version: then the
 * machine's RAM.
 */
export function memoryLimitBytes(
  constrained: number = process.constrainedMemory(),
  total: number = totalmem(),
): number {
  return constrained > 0 && constrained < total ? constrained : total;
}

/** V8's heap size limit, in bytes: every space together. */
export function heapLimitBytes(): number {
  return getHeapStatistics().heap_size_limit;
}

/**
 * `tenant_gateway_memory_limit_bytes` and `tenant_gateway_heap_limit_bytes`,
 * read at each scrape: what `process_resident_memory_bytes` and
 * `nodejs_heap_size_used_bytes` run into (the alerts compare them).
 */
export function registerMemoryLimits(registry: Registry): void {
  new Gauge({
    name: 'tenant_gateway_memory_limit_bytes',
    help: "Memory the process may use: its cgroup's limit (a container's), else the machine's RAM.",
    registers: [registry],
    collect() {
      this.set(memoryLimitBytes());
    },
  });
  new Gauge({
    name: 'tenant_gateway_heap_limit_bytes',
    help: "V8's heap size limit: past it the process ends with a heap out-of-memory error.",
    registers: [registry],
    collect() {
      this.set(heapLimitBytes());
    },
  });
}
