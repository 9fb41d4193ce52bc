/**
 * conformance's session fuzzer against the CUDA backend (GPU only): random valid and invalid call
 * sequences through the public TypeScript API. Skipped, with the reason in its title, where the
 * backend cannot run (no native build, no GPU). On the GPU machine
 * `node dist/cli.js fuzz` runs the same (device-run.sh's `fuzz` step).
 */

import { visibleGpuCount } from "@switchyard/cuda";
import { describe, expect, it } from "vitest";
import { cudaBackend } from "../src/backend.js";
import { runTsFuzz } from "../src/checks/tsFuzz.js";

const reason = await cudaBackend().unavailableReason();
const skip = reason;
const title = (t: string) => (skip ? `${t} (skipped: ${skip})` : t);

describe("fuzz: the CUDA backend's TypeScript API", () => {
  it.skipIf(skip !== null)(
    title(
      "bad inputs, ranks, phases, configs and destroyed sessions are refused with named errors; steps stay exact",
    ),
    async () => {
      const r = await runTsFuzz({
        numRuns: Number(process.env.SWITCHYARD_FUZZ_RUNS ?? 20),
        maxRanks: Math.min(4, visibleGpuCount()),
        maxHidden: 512,
      });
      console.log(r.text);
      expect(r.ok, r.text).toBe(true);
    },
    900_000,
  );
});
