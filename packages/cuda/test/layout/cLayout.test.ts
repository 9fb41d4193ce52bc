import { execFileSync } from "node:child_process";
import {
  ConfigError,
  computeLayout,
  defineConfig,
  describeLayout,
  type EpConfig,
  type Layout,
  layoutParams,
  PARAM_NAMES,
  REGION_NAMES,
} from "@switchyard/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileLayout, findCCompiler } from "./compileLayout.js";
import { brokenConfig, configLine, validConfig } from "./configs.js";

/** What sy_layout_cli prints for one config (see src/native/layout/layout_cli.c). */
interface CResult {
  status: number;
  field?: string;
  error?: string;
  params?: number[];
  paramNames?: string[];
  regions?: Record<string, unknown>[];
  describe?: string;
  [scalar: string]: unknown;
}

/** Core's answer for a config: the layout, a ConfigError, or numbers past 2^53 (C refuses those). */
type CoreResult = { layout: Layout } | { error: ConfigError } | { unsafe: true };

function coreResult(input: EpConfig): CoreResult {
  let config: EpConfig;
  try {
    config = defineConfig(input);
  } catch (e) {
    if (e instanceof ConfigError) return { error: e };
    throw e;
  }
  const layout = computeLayout(config);
  return Number.isSafeInteger(layout.bytesPerRank) ? { layout } : { unsafe: true };
}

/** Everything C says about a layout equals core's: scalars, every region, the params, the report. */
function expectSameLayout(c: CResult, layout: Layout): void {
  const { status, params, paramNames, regions, describe: text, ...scalars } = c;
  expect(status).toBe(0);
  const coreScalars = Object.entries(layout).filter(([, v]) => typeof v === "number");
  expect(Object.fromEntries(coreScalars)).toEqual(scalars);
  expect(params).toEqual(layoutParams(layout));
  expect(paramNames).toEqual([...PARAM_NAMES]);
  expect(regions?.map((r) => r.name)).toEqual([...REGION_NAMES]);
  for (const r of regions ?? []) {
    const { doc: _doc, ...core } = layout.regions[r.name as (typeof REGION_NAMES)[number]];
    expect(r).toEqual({ ...core, shape: [...core.shape], axes: [...core.axes] });
  }
  expect(text).toBe(describeLayout(layout));
}

function runC(cli: string, configs: EpConfig[]): CResult[] {
  const out = execFileSync(cli, [], {
    input: `${configs.map(configLine).join("\n")}\n`,
    maxBuffer: 1 << 30,
    encoding: "utf8",
  });
  return out
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as CResult);
}

const cc = findCCompiler();
const skip = cc === null ? "no C compiler (set CC, or install cc / gcc)" : null;
const seed = Number(process.env.SWITCHYARD_SEED ?? Date.now() % 2 ** 31);
const VALID_RUNS = 12_000;
const BROKEN_RUNS = 3_000;

describe("the C layout (src/native/layout) vs core's computeLayout / layoutParams", () => {
  it.skipIf(skip !== null)(
    `matches core on ${VALID_RUNS} valid and ${BROKEN_RUNS} broken generated configs, seed ${seed}${skip ? ` (skipped: ${skip})` : ""}`,
    () => {
      const cli = compileLayout(cc as string, "cli");
      const configs = [
        ...fc.sample(validConfig, { seed, numRuns: VALID_RUNS }),
        ...fc.sample(brokenConfig, { seed: seed + 1, numRuns: BROKEN_RUNS }),
      ];
      const got = runC(cli, configs);
      expect(got.length).toBe(configs.length);
      const seen = { layouts: 0, refused: 0, unsafe: 0, masked: 0, contiguous: 0, fp8: 0, dp: 0 };
      configs.forEach((config, i) => {
        const c = got[i] as CResult;
        const core = coreResult(config);
        try {
          if ("layout" in core) {
            expectSameLayout(c, core.layout);
            seen.layouts++;
            seen[config.layout]++;
            if (config.dispatchDtype === "fp8-e4m3") seen.fp8++;
            if (config.dpSize > 1) seen.dp++;
          } else if ("error" in core) {
            expect({ status: c.status, field: c.field, error: c.error }).toEqual({
              status: 1,
              field: core.error.field,
              error: core.error.message,
            });
            seen.refused++;
          } else {
            expect({ status: c.status, field: c.field }).toEqual({ status: 1, field: "(layout)" });
            seen.unsafe++;
          }
        } catch (e) {
          throw new Error(
            `config ${i} of seed ${seed} (replay: SWITCHYARD_SEED=${seed}): ${JSON.stringify(config)}\n${(e as Error).message}`,
          );
        }
      });
      console.log(`C layout vs core, seed ${seed}: ${JSON.stringify(seen)}`);
      expect(seen.layouts).toBeGreaterThanOrEqual(10_000);
      for (const k of ["refused", "unsafe", "masked", "contiguous", "fp8", "dp"] as const) {
        expect(seen[k], k).toBeGreaterThan(0);
      }
    },
    120_000,
  );
});
