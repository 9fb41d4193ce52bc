import type { CliIo } from "./io.js";

/** The package that owns the benchmark; a variable so TypeScript does not need it installed. */
const CUDA_PACKAGE = "@switchyard/cuda-rig";

/** `switchyard bench ...`: hands over to `runBench(argv)` of @switchyard/cuda-rig when it has one. */
export async function benchCommand(argv: string[], io: CliIo): Promise<number> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(CUDA_PACKAGE)) as Record<string, unknown>;
  } catch (e) {
    io.err(
      `bench: cannot load ${CUDA_PACKAGE} (${e instanceof Error ? e.message : String(e)}); ` +
        "the benchmark lives there: build it (npm run build) on a machine with the CUDA toolchain\n",
    );
    return 2;
  }
  if (typeof mod.runBench !== "function") {
    io.err(
      `bench: ${CUDA_PACKAGE} does not export runBench(argv) yet; the benchmark arrives with the CUDA backend\n`,
    );
    return 2;
  }
  const status = await (mod.runBench as (argv: string[]) => unknown)(argv);
  return typeof status === "number" ? status : 0;
}
