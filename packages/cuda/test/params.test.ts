import { readFileSync } from "node:fs";
import { computeLayout, defineConfig, layoutParams, PARAM_NAMES } from "@switchyard/core";
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

  it("the kernels' compiled order (params.cuh) is core's PARAM_NAMES", () => {
    const src = readFileSync(new URL("../src/native/kernels/params.cuh", import.meta.url), "utf8");
    const body = src.slice(src.indexOf("kParamNames ="), src.indexOf(";", src.indexOf("kParamNames =")));
    const names = [...body.matchAll(/"([^"]*)"/g)].map((m) => m[1]).join("");
    expect(names.split(",")).toEqual([...PARAM_NAMES]);
    const count = (src.match(/^\s+P_[A-Z_0-9]+( = 0)?,$/gm) ?? []).length;
    expect(count + 10 * 2).toBe(PARAM_NAMES.length);
  });
});
