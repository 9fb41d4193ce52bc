import { readFileSync } from "node:fs";
import { computeLayout, defineConfig, layoutParams, PARAM_NAMES, REGION_NAMES } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { packParams } from "../src/params.js";

describe("parameter block", () => {
  it("packs core's layoutParams as u64 in PARAM_NAMES order", () => {
    const layout = computeLayout(
      defineConfig({
        ranks: 4,
        experts: 256,
        topK: 8,
        hidden: 7168,
        maxTokensPerRank: 128,
        dispatchDtype: "fp8-e4m3",
      }),
    );
    const packed = packParams(layout);
    expect(packed).toBeInstanceOf(BigUint64Array);
    expect(Array.from(packed, Number)).toEqual(layoutParams(layout));
  });

  it("the kernels' compiled order (params.cuh, from switchyard_contract.h) is core's PARAM_NAMES", () => {
    const src = readFileSync(new URL("../src/native/kernels/params.cuh", import.meta.url), "utf8");
    expect(src).toContain("kParamNames = SY_CONTRACT_PARAM_NAMES;");
    expect(src).toContain("SY_CONTRACT_SCALAR_PARAMS(SY_PARAMS_ENUMERATOR)");
    const h = readFileSync(new URL("../include/switchyard_contract.h", import.meta.url), "utf8");
    const from = h.indexOf("#define SY_CONTRACT_PARAM_NAMES");
    const body = h.slice(from, h.indexOf("\n\n", from));
    const names = [...body.matchAll(/"([^"]*)"/g)].map((m) => m[1]).join("");
    expect(names.split(",")).toEqual([...PARAM_NAMES]);
    const scalars = h.slice(
      h.indexOf("#define SY_CONTRACT_SCALAR_PARAMS"),
      h.indexOf("#define SY_CONTRACT_REGION_DTYPES"),
    );
    const count = (scalars.match(/^\s+X\(\d+, /gm) ?? []).length;
    expect(count + REGION_NAMES.length * 2).toBe(PARAM_NAMES.length);
  });
});
