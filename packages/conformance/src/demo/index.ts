import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import {
  type Backend,
  computeLayout,
  defineConfig,
  describeLayout,
  referenceBackend,
} from "@switchyard/core";
import { renderDemoSvg } from "./picture.js";
import { demoInputs, runDemoStep } from "./step.js";

const HELP = `switchyard demo: one MoE step on the default backend, checked against the reference

  --backend <webgpu|reference>  default webgpu, falling back to reference where no adapter can be had
  --ranks N --experts N --topk N --hidden N --tokens N   world and step size (default 4, 32, 4, 512, 64)
  --dp N                        ranks per DP group (default 1)
  --layout <masked|contiguous>  default masked
  --fp8                         quantise to fp8-e4m3 on dispatch
  --seed N                      routing and data seed (default 1)
  --out FILE                    picture to write (default switchyard-demo.svg)`;

async function pickBackend(name: string | undefined): Promise<Backend> {
  if (name === "reference") return referenceBackend;
  const specifier = "@switchyard/webgpu-ref";
  try {
    const mod = (await import(specifier)) as { webgpuBackend: Backend };
    const reason = await mod.webgpuBackend.unavailableReason();
    if (reason === null) return mod.webgpuBackend;
    if (name === "webgpu") throw new Error(`webgpu backend unavailable: ${reason}`);
    console.log(`webgpu backend unavailable (${reason}); using the reference backend`);
  } catch (e) {
    if (name === "webgpu") throw e;
    console.log(`webgpu backend could not be loaded (${(e as Error).message}); using the reference backend`);
  }
  return referenceBackend;
}

/** `switchyard demo`. Returns the process exit code. */
export async function runDemo(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      backend: { type: "string" },
      ranks: { type: "string", default: "4" },
      experts: { type: "string", default: "32" },
      topk: { type: "string", default: "4" },
      hidden: { type: "string", default: "512" },
      tokens: { type: "string", default: "64" },
      dp: { type: "string", default: "1" },
      layout: { type: "string", default: "masked" },
      fp8: { type: "boolean", default: false },
      seed: { type: "string", default: "1" },
      out: { type: "string", default: "switchyard-demo.svg" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const tokens = Number(values.tokens);
  const config = defineConfig({
    ranks: Number(values.ranks),
    dpSize: Number(values.dp),
    experts: Number(values.experts),
    topK: Number(values.topk),
    hidden: Number(values.hidden),
    maxTokensPerRank: tokens,
    dispatchDtype: values.fp8 ? "fp8-e4m3" : "bf16",
    layout: values.layout as "masked" | "contiguous",
    expertAlignment: values.layout === "contiguous" ? 16 : 1,
  });
  const backend = await pickBackend(values.backend);
  const inputs = demoInputs(config, tokens, Number(values.seed));
  const outcome = await runDemoStep(backend, config, inputs);
  const maxLoad = Math.max(1, ...outcome.rowsPerRank);
  console.log(`backend ${backend.name}: one step in ${outcome.ms.toFixed(1)} ms`);
  outcome.rowsPerRank.forEach((n, r) => {
    console.log(
      `  rank ${String(r).padStart(2)} receives ${String(n).padStart(5)} rows ${"#".repeat(Math.round((n / maxLoad) * 40))}`,
    );
  });
  console.log(`memory per rank:\n${describeLayout(computeLayout(config)).replace(/^/gm, "  ")}`);
  writeFileSync(values.out, renderDemoSvg(config, outcome, backend.name));
  const ok = outcome.dispatchMismatches === 0 && outcome.combineMismatches === 0;
  console.log(
    ok
      ? `matches the reference: dispatch rows bit-exact, combine bit-identical. Picture: ${values.out}`
      : `MISMATCH: ${outcome.dispatchMismatches} dispatch rows, ${outcome.combineMismatches} combine values (max |diff| ${outcome.maxCombineError}). Picture: ${values.out}`,
  );
  return ok ? 0 : 1;
}
