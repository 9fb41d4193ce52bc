import {
  type Backend,
  type Capabilities,
  type DispatchInput,
  type DispatchResult,
  type EpConfig,
  referenceBackend,
  type Session,
  type SessionOptions,
  type StepStats,
  validateRankInput,
} from "@switchyard/core";

/**
 * A session that forwards every call to core's reference session. Broken backends override one
 * method to plant one bug, the way a real backend might get it wrong.
 */
export class ForwardingSession implements Session {
  constructor(protected readonly inner: Session) {}

  get config(): Readonly<EpConfig> {
    return this.inner.config;
  }

  get layout() {
    return this.inner.layout;
  }

  dispatchSend(rank: number, input: DispatchInput): Promise<void> {
    return this.inner.dispatchSend(rank, input);
  }

  dispatchRecv(rank: number): Promise<DispatchResult> {
    return this.inner.dispatchRecv(rank);
  }

  combineSend(rank: number, expertOut: Uint16Array): Promise<void> {
    return this.inner.combineSend(rank, expertOut);
  }

  combineRecv(rank: number, topkWeights?: Float32Array): Promise<Uint16Array> {
    return this.inner.combineRecv(rank, topkWeights);
  }

  stats(rank: number): Promise<StepStats> {
    return this.inner.stats!(rank);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/**
 * A broken backend whose combine send hands the reference `edit(config, r, expertOut)` in place of
 * the expert outputs, `r` being the rank's last dispatch result; `edit` returns null to leave them.
 */
export function brokenCombineSend(
  name: string,
  edit: (config: EpConfig, r: DispatchResult, expertOut: Uint16Array) => Uint16Array | null,
): Backend {
  return brokenBackend(
    name,
    (inner) =>
      new (class extends ForwardingSession {
        private readonly results = new Map<number, DispatchResult>();

        override async dispatchRecv(rank: number): Promise<DispatchResult> {
          const r = await this.inner.dispatchRecv(rank);
          this.results.set(rank, r);
          return r;
        }

        override combineSend(rank: number, expertOut: Uint16Array): Promise<void> {
          const r = this.results.get(rank);
          const out = r && expertOut instanceof Uint16Array ? edit(this.config, r, expertOut) : null;
          return this.inner.combineSend(rank, out ?? expertOut);
        }
      })(inner),
  );
}

/** The reference backend's capabilities without `combineWeights: "home"`: what most broken backends declare. */
export const EXPERT_WEIGHTS_ONLY: Capabilities = Object.freeze({
  ...referenceBackend.capabilities,
  combineWeights: ["expert"] as const,
});

/**
 * A backend whose sessions are `wrap(referenceSession)`. It declares `capabilities` (default: the
 * reference's, weights with dispatch only, so a bug planted for that mode is not drawn into home
 * configs it was not written for).
 */
export function brokenBackend(
  name: string,
  wrap: (inner: Session) => Session,
  capabilities: Capabilities = EXPERT_WEIGHTS_ONLY,
): Backend {
  return {
    name,
    capabilities,
    unavailableReason: async () => null,
    createSession: async (config: EpConfig, options?: SessionOptions) =>
      wrap(await referenceBackend.createSession(config, options)),
  };
}

/** A deep copy of a dispatch result, to modify. */
export function copyResult(r: DispatchResult): DispatchResult {
  return {
    x: r.x.slice(),
    scales: r.scales ? r.scales.slice() : null,
    meta: r.meta.slice(),
    expertOffsets: r.expertOffsets.slice(),
    expertCounts: r.expertCounts.slice(),
    sourceCounts: r.sourceCounts.slice(),
  };
}

/** Whether core would accept this input (broken wrappers only rewrite valid inputs). */
export function valid(s: ForwardingSession, rank: number, input: DispatchInput): boolean {
  try {
    validateRankInput(s.config, rank, input);
    return true;
  } catch {
    return false;
  }
}
