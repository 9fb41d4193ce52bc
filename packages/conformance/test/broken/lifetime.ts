import { type DispatchResult, ProtocolError } from "@switchyard/core";
import { brokenBackend, ForwardingSession } from "./wrap.js";

/** Per config: what each rank received last, left behind by a destroyed session. */
const leftOver = new Map<string, Map<number, DispatchResult>>();

/**
 * Reuses a destroyed session's buffers for the next session of the same config without clearing
 * them, the way a pool of device buffers might: both sessions' first steps carry the same epoch,
 * so the new session's first receive takes the old session's last delivery for its own.
 */
export const reusedBuffers = brokenBackend(
  "reuses-buffers-uncleared",
  (inner) =>
    new (class extends ForwardingSession {
      private readonly key = JSON.stringify(this.config);
      private readonly last = new Map<number, DispatchResult>();
      private readonly inherited = leftOver.get(this.key) ?? new Map<number, DispatchResult>();

      override async dispatchRecv(rank: number): Promise<DispatchResult> {
        const fresh = await this.inner.dispatchRecv(rank);
        const stale = this.inherited.get(rank);
        this.inherited.delete(rank);
        const r = stale ?? fresh;
        this.last.set(rank, r);
        return r;
      }

      override destroy(): Promise<void> {
        leftOver.set(this.key, this.last);
        return this.inner.destroy();
      }
    })(inner),
);

/**
 * Waits forever for a rank that never sent (no timeout at all), where the reference would answer
 * at once with a ProtocolError: each run of the missing-rank property hangs until the property's
 * own limit, shrinking included.
 */
export const hangsOnMissingRank = brokenBackend(
  "hangs-on-missing-rank",
  (inner) =>
    new (class extends ForwardingSession {
      override async dispatchRecv(rank: number): Promise<DispatchResult> {
        try {
          return await this.inner.dispatchRecv(rank);
        } catch (e) {
          if (e instanceof ProtocolError) return new Promise<DispatchResult>(() => {});
          throw e;
        }
      }
    })(inner),
);
