import { fileURLToPath } from "node:url";
import { defineConfig } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { makeInputs } from "../src/checks/step.js";
import { WorkerGroup } from "../src/launcher.js";
import { CudaSession } from "../src/session.js";

const fake = fileURLToPath(new URL("./fixtures/fakeFaultWorker.mjs", import.meta.url));
const config = defineConfig({ ranks: 2, experts: 4, topK: 2, hidden: 64, maxTokensPerRank: 4 });

/**
 * A session on stand-in workers in which rank 1 never sends ("missing") or dies in dispatchSend
 * ("kill"), and rank 0's dispatchRecv fails; `released` holds what destroy() decided.
 */
async function failedSession(action: "missing" | "kill") {
  const group = await WorkerGroup.launch({
    ranks: 2,
    workerPath: fake,
    env: { SWITCHYARD_TEST_HOOKS: "1" },
  });
  const released: boolean[] = [];
  const s = await CudaSession.open(config, group, 200, {
    release: async (_g, healthy) => {
      released.push(healthy);
    },
  });
  await group.all("hook", () => ({ victim: 1, phase: "dispatchSend", action, stallMs: 0 }), 5000);
  const inputs = makeInputs(config, 4, 1);
  await s.dispatchSend(0, inputs[0]);
  const victim = action === "kill" ? s.dispatchSend(1, inputs[1]).catch((e: Error) => e) : null;
  const survivor = await s.dispatchRecv(0).catch((e: Error) => e);
  await victim;
  await s.destroy();
  return { group, survivor, released };
}

describe("CudaSession.destroy after a failure (stand-in workers, no GPU)", () => {
  it("hands a group back as healthy after a rank never sent and a receive timed out, once every worker closed its endpoint", async () => {
    const { group, survivor, released } = await failedSession("missing");
    try {
      expect((survivor as Error).name).toBe("TimeoutError");
      expect(released).toEqual([true]);
      expect(group.failure).toBeNull();
      // The reused workers open the next session and answer it.
      const next = await CudaSession.open(config, group, 200, { release: async () => {} });
      expect(await next.stats(0)).toMatchObject({ rank: 0, step: 0 });
      await next.destroy();
    } finally {
      await group.close();
    }
  });

  it("closes a group whose worker died", async () => {
    const { group, survivor, released } = await failedSession("kill");
    try {
      expect((survivor as Error).name).toMatch(/TimeoutError|WorkerExitError/);
      expect(released).toEqual([false]);
    } finally {
      await group.close();
    }
  });
});
