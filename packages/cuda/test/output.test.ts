import { defineConfig, UnsupportedError } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { OUTPUT_ENV, outputModeFor } from "../src/output.js";

const contiguous = defineConfig({
  ranks: 2,
  experts: 4,
  topK: 2,
  hidden: 64,
  maxTokensPerRank: 8,
  layout: "contiguous",
});
const masked = defineConfig({ ranks: 2, experts: 4, topK: 2, hidden: 64, maxTokensPerRank: 8 });

describe("outputModeFor", () => {
  it("takes the option first, then the environment, else worst-case", () => {
    expect(outputModeFor(contiguous, undefined, {})).toBe("worst-case");
    expect(outputModeFor(contiguous, undefined, { [OUTPUT_ENV]: "exact" })).toBe("exact");
    expect(outputModeFor(contiguous, "worst-case", { [OUTPUT_ENV]: "exact" })).toBe("worst-case");
    expect(outputModeFor(contiguous, "exact", {})).toBe("exact");
  });

  it("the environment is a default for contiguous endpoints only; an explicit exact masked endpoint is refused", () => {
    expect(outputModeFor(masked, undefined, { [OUTPUT_ENV]: "exact" })).toBe("worst-case");
    expect(() => outputModeFor(masked, "exact", {})).toThrow(UnsupportedError);
    expect(() => outputModeFor(masked, "exact", {})).toThrow(/contiguous layout/);
  });

  it("names a bad value and the accepted ones", () => {
    expect(() => outputModeFor(contiguous, undefined, { [OUTPUT_ENV]: "exact-size" })).toThrow(
      /SWITCHYARD_CUDA_OUTPUT=exact-size: must be one of "worst-case", "exact"/,
    );
    expect(() => outputModeFor(contiguous, "big" as never, {})).toThrow(/output "big"/);
  });
});
