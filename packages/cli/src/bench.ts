import { cudaOptions } from "./backends.js";
import type { CliIo } from "./io.js";

/** `switchyard bench ...`: hands over to `runBench(argv)` of @switchyard/cuda-rig (an optional dependency). */
export async function benchCommand(argv: string[], io: CliIo): Promise<number> {
  let runBench: (argv: string[]) => Promise<unknown>;
  try {
    const rig = await import("@switchyard/cuda-rig");
    cudaOptions(rig);
    runBench = rig.runBench;
  } catch (e) {
    io.err(
      `bench: cannot load @switchyard/cuda-rig (${e instanceof Error ? e.message : String(e)}); ` +
        "the benchmark lives there: build it (npm run build) on a machine with the CUDA toolchain\n",
    );
    return 2;
  }
  const status = await runBench(argv);
  return typeof status === "number" ? status : 0;
}
