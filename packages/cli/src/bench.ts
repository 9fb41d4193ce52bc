import { cudaOptions } from "./backends.js";
import type { CliIo } from "./io.js";

/**
 * `switchyard bench ...`: hands over to `runBench(argv, { workers })` of @switchyard/cuda-rig (an
 * optional dependency), its workers started with the ranks per GPU and runtime options of this
 * process's environment.
 */
export async function benchCommand(argv: string[], io: CliIo): Promise<number> {
  let runBench: () => Promise<unknown>;
  try {
    const rig = await import("@switchyard/cuda-rig");
    const workers = rig.workerSetupOf(cudaOptions(rig));
    runBench = () => rig.runBench(argv, { workers });
  } catch (e) {
    io.err(
      `bench: cannot load @switchyard/cuda-rig (${e instanceof Error ? e.message : String(e)}); ` +
        "the benchmark lives there: build it (npm run build) on a machine with the CUDA toolchain\n",
    );
    return 2;
  }
  const status = await runBench();
  return typeof status === "number" ? status : 0;
}
