/** Test support shared by the packages' memory checks (lifecycle and soak tests of core and webgpu-ref). */
/** Process memory in bytes, as `process.memoryUsage()` reports it. */
export interface MemorySample {
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  rss: number;
}

const KEYS = ["heapUsed", "external", "arrayBuffers", "rss"] as const;

/**
 * Memory after forcing garbage collection (vitest runs those packages with --expose-gc; without it
 * the sample is taken as is and the test says so).
 */
export async function settledMemory(): Promise<MemorySample & { collected: boolean }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; gc && i < 3; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const m = process.memoryUsage();
  return {
    heapUsed: m.heapUsed,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    rss: m.rss,
    collected: !!gc,
  };
}

const mib = (b: number) => `${(b / 2 ** 20).toFixed(2)} MiB`;

/** Growth per field, after - before (bytes). */
export function growth(before: MemorySample, after: MemorySample): MemorySample {
  return {
    heapUsed: after.heapUsed - before.heapUsed,
    external: after.external - before.external,
    arrayBuffers: after.arrayBuffers - before.arrayBuffers,
    rss: after.rss - before.rss,
  };
}

/** "label: heapUsed 5.10 MiB -> 5.20 MiB (+0.10 MiB), ..." */
export function describeMemory(label: string, before: MemorySample, after: MemorySample): string {
  const g = growth(before, after);
  const parts = KEYS.map(
    (k) => `${k} ${mib(before[k])} -> ${mib(after[k])} (${g[k] >= 0 ? "+" : ""}${mib(g[k])})`,
  );
  return `${label}: ${parts.join(", ")}`;
}
