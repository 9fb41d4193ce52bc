import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  COMBINE_WEIGHTS,
  computeLayout,
  conditionHolds,
  DTYPES,
  defineConfig,
  type EpConfigInput,
  extentFactors,
  LAYOUT_SYMBOLS,
  LAYOUTS,
  layoutSymbols,
  REGION_NAMES,
  REGION_TABLE,
  type RegionDescription,
  regionFormOf,
  renderLayoutRegions,
} from "../src/index.js";

/**
 * Layouts computed before the regions were described as data (offsets, shapes, docs, order). A
 * change of the layout that is meant rewrites them: `SWITCHYARD_UPDATE_LAYOUTS=1 npx vitest run
 * test/regionTable.test.ts` in packages/core, then `npx biome check --write .`.
 */
const GOLDEN_URL = new URL("./fixtures/layouts.json", import.meta.url);
const GOLDEN = JSON.parse(readFileSync(GOLDEN_URL, "utf8")) as {
  input: EpConfigInput;
  layout: Record<string, unknown>;
}[];

/** What the fixture holds of a layout: its scalars and its regions in placement order. */
function goldenOf(input: EpConfigInput): Record<string, unknown> {
  const { config: _config, regions, ...scalars } = computeLayout(defineConfig(input));
  return JSON.parse(JSON.stringify({ ...scalars, regions: Object.values(regions) }));
}

const table: readonly RegionDescription[] = REGION_TABLE;

describe("REGION_TABLE", () => {
  it("gives computeLayout the layouts it had before, region for region and in placement order", () => {
    let golden = GOLDEN;
    if (process.env.SWITCHYARD_UPDATE_LAYOUTS === "1") {
      golden = GOLDEN.map(({ input }) => ({ input, layout: goldenOf(input) }));
      writeFileSync(GOLDEN_URL, `${JSON.stringify(golden, null, 2)}\n`);
    }
    for (const { input, layout } of golden) {
      expect(goldenOf(input), `${JSON.stringify(input)} (a layout change that is meant: see GOLDEN)`).toEqual(
        layout,
      );
    }
  });

  it("numbers the regions 0..n-1, once each, and REGION_NAMES follows the numbers", () => {
    expect(table.map((r) => r.index).sort((a, b) => a - b)).toEqual(table.map((_, i) => i));
    expect(new Set(table.map((r) => r.name)).size).toBe(table.length);
    for (const r of table) expect(REGION_NAMES[r.index]).toBe(r.name);
  });

  it("has a form for every region and config, one axis per extent, only known symbols", () => {
    for (const layout of LAYOUTS) {
      for (const combineWeights of COMBINE_WEIGHTS) {
        for (const dispatchDtype of DTYPES) {
          const config = {
            ...defineConfig({ ranks: 2, experts: 4, topK: 2, hidden: 256, maxTokensPerRank: 3 }),
          };
          Object.assign(config, { layout, combineWeights, dispatchDtype });
          for (const r of table) expect(() => regionFormOf(r, config), r.name).not.toThrow();
        }
      }
    }
    for (const r of table) {
      for (const f of r.forms) {
        expect(f.axes.length, r.name).toBe(f.shape.length);
        for (const e of f.shape) {
          for (const s of extentFactors(e)) expect(Object.keys(LAYOUT_SYMBOLS), r.name).toContain(s);
        }
      }
    }
  });

  it("reads conditions field by field; an empty one always holds", () => {
    const masked = defineConfig({ ranks: 2, experts: 4, topK: 2, hidden: 256, maxTokensPerRank: 3 });
    expect(conditionHolds({}, masked)).toBe(true);
    expect(conditionHolds(true, masked)).toBe(true);
    expect(conditionHolds(false, masked)).toBe(false);
    expect(conditionHolds({ layout: "masked", combineWeights: "expert" }, masked)).toBe(true);
    expect(conditionHolds({ layout: "masked", dispatchDtype: "fp8-e4m3" }, masked)).toBe(false);
  });

  it("names a region without a form for the config", () => {
    const config = defineConfig({ ranks: 2, experts: 4, topK: 2, hidden: 256, maxTokensPerRank: 3 });
    const formless = {
      ...table[0],
      forms: [{ ...table[0].forms[0], when: { layout: "contiguous" as const } }],
    };
    expect(() => regionFormOf(formless as RegionDescription, config)).toThrow(
      /region countSignal has no form/,
    );
  });

  it("gives every symbol a value, and the C table every region", () => {
    const config = defineConfig({ ranks: 2, experts: 4, topK: 2, hidden: 256, maxTokensPerRank: 3 });
    expect(Object.keys(layoutSymbols(config))).toEqual(Object.keys(LAYOUT_SYMBOLS));
    const c = renderLayoutRegions();
    for (const r of table) expect(c).toContain(`/* ${r.name} */`);
    expect(c).toContain("do not edit");
  });
});
