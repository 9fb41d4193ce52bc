import { type DispatchResult, deliveredRows } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { runConformance } from "../src/index.js";
import { brokenBackend, copyResult, ForwardingSession } from "./broken/wrap.js";

/**
 * Core's reference, except that every output row that carries no token (a contiguous block's
 * padding rows, a masked block's rows past its count) holds NaN payload and scales, as a backend
 * that never writes them might leave there: the protocol leaves those bytes unspecified, so the
 * suite must pass it.
 */
const staleUnusedRows = brokenBackend(
  "stale-unused-rows",
  (inner) =>
    new (class extends ForwardingSession {
      override async dispatchRecv(rank: number): Promise<DispatchResult> {
        const r = copyResult(await this.inner.dispatchRecv(rank));
        const rows = r.meta.length / 4;
        const H = r.x.length / rows;
        const S = r.scales ? r.scales.length / rows : 0;
        const used = new Set(deliveredRows(this.config, r).map((d) => d.row));
        for (let row = 0; row < rows; row++) {
          if (used.has(row)) continue;
          r.x.fill(r.x instanceof Uint8Array ? 0x7f : 0x7fff, row * H, (row + 1) * H); // NaN in e4m3 / bf16
          r.scales?.fill(Number.NaN, row * S, (row + 1) * S);
        }
        return r;
      }
    })(inner),
);

describe("the suite accepts what the protocol leaves unspecified", () => {
  it("rows that carry no token may hold anything (padding rows, rows past a masked block's count)", async () => {
    const only = [
      "dispatch/rows",
      "dispatch/payload",
      "dispatch/row-order",
      "dispatch/layout/contiguous",
      "dispatch/layout/masked",
      "combine/accuracy",
      "combine/exact-order",
      "roundtrip/identity",
    ];
    const report = await runConformance(staleUnusedRows, { only, seed: 20241126, numRuns: 15 });
    const ran = report.results.filter((r) => r.status !== "skip");
    expect(ran.map((r) => r.name).sort()).toEqual([...only].sort());
    for (const r of ran) expect(r.status, `${r.name}: ${r.error}`).toBe("pass");
  });
});
