import { formatFuzzReport, fuzzBackend } from "@switchyard/conformance";
import { cudaBackend } from "../backend.js";
import type { WorkerSetup } from "../launcher.js";
import { backendOptionsFor } from "../options.js";
import { drainPool } from "../pool.js";

export interface TsFuzzOptions {
  numRuns: number;
  seed?: number;
  maxRanks: number;
  maxHidden: number;
  maxOps?: number;
  timeoutMs?: number;
  /** How the backend's sessions start their workers (ranks per GPU, runtime options). */
  workers?: WorkerSetup;
}

/**
 * conformance's session fuzzer (`fuzzBackend`) against cudaBackend: random valid and invalid call
 * sequences through the public TypeScript API, every refusal a named error, the caller's arrays
 * untouched, every completed step bit-exact with core's reference. Fails if the run proved nothing
 * (no bad call tried or no step verified).
 */
export async function runTsFuzz(o: TsFuzzOptions): Promise<{ ok: boolean; text: string; report: unknown }> {
  try {
    const report = await fuzzBackend(cudaBackend(backendOptionsFor(o.workers)), {
      numRuns: o.numRuns,
      seed: o.seed,
      maxRanks: o.maxRanks,
      maxHidden: o.maxHidden,
      maxOps: o.maxOps ?? 40,
      timeoutMs: o.timeoutMs ?? 5000,
    });
    const c = report.counts;
    const ok = !report.failed && c.badTried > 0 && c.stepsVerified > 0 && c.badRefused === c.badTried;
    return { ok, text: `${ok ? "PASS" : "FAIL"} ${formatFuzzReport(report)}`, report };
  } finally {
    await drainPool();
  }
}
