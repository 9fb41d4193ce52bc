import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { demoInputs, runDemoStep, validateCapabilities } from "@switchyard/conformance";
import { type Backend, BackendUnavailableError, computeLayout, describeLayout } from "@switchyard/core";
import { loadBackend, unavailableReason } from "../backend.js";
import type { CliIo } from "../io.js";
import { checkWritable } from "../usage.js";
import { demoConfig } from "./flags.js";
import { renderDemoSvg } from "./picture.js";

const HELP = `switchyard demo: one MoE step on a backend, checked against the reference

  --backend <name|module>       webgpu, reference, cuda, or a module path / package; without it
                                webgpu, falling back to reference where no WebGPU adapter can be had
  --ranks N --experts N --topk N --hidden N --tokens N   world and step size (default 4, 32, 4, 512, 64)
  --dp N                        ranks per DP group (default 1)
  --layout <masked|contiguous>  default masked
  --fp8                         quantise to fp8-e4m3 on dispatch
  --combine-weights <expert|home>  where combine applies the router weights: on the expert ranks
                                (default), or at the home rank, passed to combineRecv (masked only)
  --seed N                      routing and data seed (default 1)
  --out FILE                    picture to write (default switchyard-demo.svg)
  exit status: 0 matches the reference, 1 a mismatch, 2 bad usage or the backend cannot run here
`;

/** The backend asked for, or (none asked for) webgpu where it can run, else the reference. */
async function pickBackend(name: string | undefined, io: CliIo): Promise<Backend> {
  const backend = await loadBackend(name ?? "webgpu", io.cwd);
  validateCapabilities(String(backend.name), backend.capabilities);
  const why = await unavailableReason(backend);
  if (why === null) return backend;
  if (name !== undefined) throw new BackendUnavailableError(String(backend.name), why);
  io.err(`webgpu backend unavailable (${why}); using the reference backend\n`);
  return loadBackend("reference", io.cwd);
}

/** `switchyard demo`. Returns the process exit code. */
export async function runDemo(argv: string[], io: CliIo): Promise<number> {
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
      "combine-weights": { type: "string" },
      seed: { type: "string", default: "1" },
      out: { type: "string", default: "switchyard-demo.svg" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  const { config, tokens, seed } = demoConfig(values);
  await checkWritable("--out", values.out, io.cwd);
  const backend = await pickBackend(values.backend, io);
  const inputs = demoInputs(config, tokens, seed);
  const outcome = await runDemoStep(backend, config, inputs);
  const maxLoad = Math.max(1, ...outcome.rowsPerRank);
  io.out(`backend ${backend.name}: one step in ${outcome.ms.toFixed(1)} ms\n`);
  outcome.rowsPerRank.forEach((n, r) => {
    const bar = "#".repeat(Math.round((n / maxLoad) * 40));
    io.out(`  rank ${String(r).padStart(2)} receives ${String(n).padStart(5)} rows ${bar}\n`);
  });
  io.out(`memory per rank:\n${describeLayout(computeLayout(config)).replace(/^/gm, "  ")}\n`);
  writeFileSync(resolve(io.cwd, values.out), renderDemoSvg(config, outcome, backend.name));
  const ok = outcome.dispatchMismatches === 0 && outcome.combineMismatches === 0;
  io.out(
    ok
      ? `matches the reference: dispatch rows bit-exact, combine bit-identical. Picture: ${values.out}\n`
      : `MISMATCH: ${outcome.dispatchMismatches} dispatch rows, ${outcome.combineMismatches} combine values (max |diff| ${outcome.maxCombineError}). Picture: ${values.out}\n`,
  );
  return ok ? 0 : 1;
}
