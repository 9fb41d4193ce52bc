import { cudaBackend } from "../backend.js";
import { drainPool } from "../pool.js";

/** Imported by name at run time: conformance is not a dependency of this package. */
const CONFORMANCE = "@switchyard/conformance";

export interface TsFuzzOptions {
  numRuns: number;
  seed?: number;
  maxRanks: number;
  maxHidden: number;
  maxOps?: number;
  timeoutMs?: number;
}

interface FuzzModule {
  fuzzBackend(b: unknown, o: object): Promise<FuzzReportLike>;
  formatFuzzReport(r: FuzzReportLike): string;
}

interface FuzzReportLike {
  failed: boolean;
  seed: number;
  counts: {
    badTried: number;
    badRefused: number;
    stepsVerified: number;
    validCalls: number;
    sessions: number;
  };
}

/**
 * conformance's session fuzzer (`fuzzBackend`) against cudaBackend: random valid and invalid call
 * sequences through the public TypeScript API, every refusal a named error, the caller's arrays
 * untouched, every completed step bit-exact with core's reference. Fails if the run proved nothing
 * (no bad call tried or no step verified).
 */
export async function runTsFuzz(o: TsFuzzOptions): Promise<{ ok: boolean; text: string; report: unknown }> {
  const mod = (await import(CONFORMANCE).catch(() => null)) as FuzzModule | null;
  if (!mod?.fuzzBackend) {
    const text = `FAIL fuzz: ${CONFORMANCE} is not built here (npm run build -w ${CONFORMANCE})`;
    return { ok: false, text, report: null };
  }
  try {
    const report = await mod.fuzzBackend(cudaBackend, {
      numRuns: o.numRuns,
      seed: o.seed,
      maxRanks: o.maxRanks,
      maxHidden: o.maxHidden,
      maxOps: o.maxOps ?? 40,
      timeoutMs: o.timeoutMs ?? 5000,
    });
    const c = report.counts;
    const ok = !report.failed && c.badTried > 0 && c.stepsVerified > 0 && c.badRefused === c.badTried;
    return { ok, text: `${ok ? "PASS" : "FAIL"} ${mod.formatFuzzReport(report)}`, report };
  } finally {
    await drainPool();
  }
}
