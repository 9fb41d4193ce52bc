/** Options of `runConformance` (all optional). */
export interface ConformanceOptions {
  /** Runs per property: default 15 (quick, for CI), 150 with `deep`. */
  numRuns?: number;
  /** Bigger configs (up to 16 ranks, 64 experts, 48 tokens, hidden 1100), more steps, 150 runs. */
  deep?: boolean;
  /** fast-check seed for every property; random when absent (the report says which). */
  seed?: number;
  /** fast-check replay path of a failure; needs `only` naming exactly one property. */
  path?: string;
  /** Property names to run: exact names, prefixes ("dispatch" runs dispatch/*), or globs ("input/*"). */
  only?: string | readonly string[];
  /** Shrink failures to a small counterexample (default true; false stops at the first failure). */
  shrink?: boolean;
  /** `SessionOptions.timeoutMs` passed to createSession (default core's DEFAULT_TIMEOUT_MS). */
  timeoutMs?: number;
  /** A single run (one generated case) taking longer than this fails (default 120 s). */
  runTimeoutMs?: number;
  /** Shrinking a failure stops after this long, keeping the smallest case so far (default 30 s). */
  shrinkTimeMs?: number;
  /** Progress: each property's start and end, and every run. */
  onProgress?: (event: ProgressEvent) => void;
  /**
   * Stops the run: once aborted, `runConformance` resolves at once with the properties that
   * finished, `interrupted: true` and the one that was running (its case in flight is abandoned,
   * and its remaining cases are not run). The abort reason (a string, e.g. "SIGTERM") is reported.
   */
  signal?: AbortSignal;
}

export type ProgressEvent =
  | { kind: "start"; name: string; index: number; total: number }
  | {
      kind: "run";
      name: string;
      /** This run's number (counting skipped cases and, after a failure, the shrinking steps). */
      run: number;
      numRuns: number;
      /** A case has failed: this run is one of the shrinking steps. */
      failed: boolean;
    }
  | { kind: "done"; result: PropertyResult; index: number; total: number };

export type PropertyStatus = "pass" | "fail" | "skip";

/** The outcome of one property. */
export interface PropertyResult {
  /** Stable hierarchical name, e.g. `dispatch/rows`. */
  name: string;
  /** Required of every backend (else gated by a capability). */
  required: boolean;
  summary: string;
  status: PropertyStatus;
  /** Why it was skipped. */
  reason?: string;
  /** The seed it ran with (always set when it ran). */
  seed?: number;
  /** fast-check's replay path of the (shrunk) failure. */
  path?: string;
  /** A short summary of the failing case (config, tokens, routing, ...). */
  counterexample?: string;
  /** What went wrong. */
  error?: string;
  /** Command-line flags that replay the failure: `--only NAME --seed S --path P`. */
  replay?: string;
  /** Cases run (for a failure: until the first failure). */
  runs: number;
  /** Shrinking steps taken after the failure. */
  shrinks?: number;
  durationMs: number;
}

/** The property that was running when the run was interrupted: never a pass. */
export interface InterruptedProperty {
  name: string;
  required: boolean;
  summary: string;
  status: "interrupted";
  seed: number;
  numRuns: number;
  /** Cases started (the last one did not finish). */
  runs: number;
  /** Cases that passed before the interruption (before the first failure, if a case failed). */
  passed: number;
  /** The run that failed, when one did: the interruption came while shrinking it. */
  failedRun?: number;
  /** When a case failed: its error. */
  error?: string;
  /** When a case failed: the flags that rerun the property from its seed (there is no path yet). */
  replay?: string;
  durationMs: number;
}

/** Why and where a run was interrupted. */
export interface Interruption {
  /** The abort reason: "SIGINT" or "SIGTERM" from the command line. */
  reason: string;
  /** The property that was running; null when the interruption came between two. */
  property: InterruptedProperty | null;
  /** The selected properties that never started. */
  notRun: string[];
}

/** The outcome of the whole suite against one backend. */
export interface ConformanceReport {
  /** The report format's version (REPORT_VERSION); the JSON Schema in `schemas/` describes it. */
  version: number;
  backend: string;
  /** No property failed, and the run was not interrupted. */
  ok: boolean;
  /** Stopped (`options.signal`) before the end: `results` holds only the properties that finished. */
  interrupted: boolean;
  /** Set when `interrupted`: the reason, the property that was running, those never started. */
  interruption?: Interruption;
  /** The backend's unavailableReason(); every property is skipped with it when set. */
  unavailable: string | null;
  seed: number;
  numRuns: number;
  deep: boolean;
  durationMs: number;
  counts: Record<PropertyStatus, number>;
  results: PropertyResult[];
}
