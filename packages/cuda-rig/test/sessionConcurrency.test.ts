import { fileURLToPath } from "node:url";
import { defineConfig, PhaseError } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { makeInputs } from "../src/checks/step.js";
import { WorkerGroup } from "../src/launcher.js";
import { CudaSession } from "../src/session.js";

const fake = fileURLToPath(new URL("./fixtures/fakeFaultWorker.mjs", import.meta.url));
const config = defineConfig({ ranks: 2, experts: 4, topK: 2, hidden: 64, maxTokensPerRank: 4 });

/** A session on stand-in workers that records every request that reaches a worker. */
async function recordedSession() {
  const group = await WorkerGroup.launch({ ranks: 2, workerPath: fake });
  const reached: string[] = [];
  const call = group.call.bind(group);
  group.call = <T>(rank: number, op: string, args: unknown, timeoutMs: number): Promise<T> => {
    reached.push(`${op}@${rank}`);
    return call<T>(rank, op, args, timeoutMs);
  };
  const s = await CudaSession.open(config, group, 2000, { release: async () => {} });
  return { group, s, reached };
}

describe("CudaSession: one call at a time per rank (stand-in workers, no GPU)", () => {
  it("two concurrent dispatchSend for one rank: the first reaches the worker, the second is a PhaseError that never does", async () => {
    const { group, s, reached } = await recordedSession();
    try {
      const inputs = makeInputs(config, 4, 1);
      const other = makeInputs(config, 4, 2);
      const [first, second] = await Promise.allSettled([
        s.dispatchSend(0, inputs[0]),
        s.dispatchSend(0, other[0]),
      ]);
      expect(first.status).toBe("fulfilled");
      expect(second.status).toBe("rejected");
      expect((second as PromiseRejectedResult).reason).toBeInstanceOf(PhaseError);
      expect(reached.filter((r) => r === "dispatchSend@0")).toHaveLength(1);
      // The refusal did not fail the session: the step goes on.
      await s.dispatchSend(1, inputs[1]);
      await Promise.all([s.dispatchRecv(0), s.dispatchRecv(1)]);
      await s.destroy();
    } finally {
      await group.close();
    }
  });

  it("a rank's calls made back to back without awaiting run in order", async () => {
    const { group, s, reached } = await recordedSession();
    try {
      const inputs = makeInputs(config, 4, 3);
      const rows = new Uint16Array(s.layout.rows * config.hidden);
      const step = (r: number) => [
        s.dispatchSend(r, inputs[r]),
        s.dispatchRecv(r),
        s.combineSend(r, rows),
        s.combineRecv(r),
      ];
      await Promise.all([...step(0), ...step(1)]);
      expect(reached.filter((r) => r.endsWith("@0")).slice(1)).toEqual([
        "dispatchSend@0",
        "dispatchRecv@0",
        "combineSend@0",
        "combineRecv@0",
      ]);
      await s.destroy();
    } finally {
      await group.close();
    }
  });
});
