import { computeLayout, type EpConfig } from "@switchyard/core";
import { WorkerGroup, type WorkerSetup } from "../launcher.js";
import { heapSizeFor } from "../pool.js";

export interface BaselineCheckOutcome {
  config: EpConfig;
  ok: boolean;
  errors: string[];
  wallMs: number;
}

/**
 * The NCCL baseline checked against core's reference on `configs.ranks` worker processes: NCCL is
 * brought up as the bench does (rank 0's unique id relayed), then every config runs `steps`
 * steps whose dispatch outputs and y are compared bit for bit (checks/baselineStep.ts). The
 * workers start as `o.workers` says.
 */
export async function runBaselineChecks(
  configs: EpConfig[],
  o: { tokens?: number; steps?: number; seed?: number; workers?: WorkerSetup } = {},
): Promise<BaselineCheckOutcome[]> {
  if (configs.length === 0) return [];
  const ranks = configs[0].ranks;
  const heap = Math.max(...configs.map((c) => heapSizeFor(computeLayout(c).symmetricBytes)));
  const group = await WorkerGroup.launch({
    ...o.workers,
    ranks,
    env: { NVSHMEM_SYMMETRIC_SIZE: String(heap) },
  });
  const out: BaselineCheckOutcome[] = [];
  try {
    const uniqueId = await group.call<Uint8Array>(0, "ncclUniqueId", {}, 60_000);
    await group.all("ncclInit", () => ({ uniqueId }), 300_000);
    for (const [i, config] of configs.entries()) {
      const t0 = Date.now();
      const opts = {
        config,
        seed: (o.seed ?? 500) + 10 * i,
        tokens: o.tokens ?? config.maxTokensPerRank,
        steps: o.steps ?? 3,
      };
      try {
        const results = await group.all<{ rank: number; errors: string[] }>(
          "baselineStep",
          () => opts,
          300_000,
        );
        const errors = results.flatMap((r) => r.errors);
        out.push({ config, ok: errors.length === 0, errors, wallMs: Date.now() - t0 });
      } catch (e) {
        out.push({
          config,
          ok: false,
          errors: [`${(e as Error).name}: ${(e as Error).message}`],
          wallMs: Date.now() - t0,
        });
        if (group.failure) break;
      }
    }
  } finally {
    await group.close();
  }
  return out;
}
