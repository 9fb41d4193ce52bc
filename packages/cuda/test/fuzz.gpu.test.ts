/**
 * conformance's session fuzzer against the CUDA backend (GPU only): random valid and invalid call
 * sequences through the public TypeScript API. Skipped, with the reason in its title, where the
 * backend cannot run (no native build, no GPU) or conformance is not built. On the GPU machine
 * `node dist/cli.js fuzz` runs the same (device-run.sh's `fuzz` step).
 */
import { describe, expect, it } from "vitest";
import { cudaBackend } from "../src/backend.js";
import { runTsFuzz } from "../src/checks/tsFuzz.js";
import { visibleGpuCount } from "../src/gpus.js";

const reason = await cudaBackend.unavailableReason();
const built = await import("@switchyard/conformance" as string).then(
  () => null,
  () => "@switchyard/conformance is not built",
);
const skip = reason ?? built;
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
