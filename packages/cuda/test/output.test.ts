import { defineConfig, UnsupportedError } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { outputModeFor, parseOutputMode } from "../src/output.js";

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
  it("takes the option, else worst-case; the environment plays no part", () => {
    process.env.SWITCHYARD_CUDA_OUTPUT = "exact";
    try {
      expect(outputModeFor(contiguous)).toBe("worst-case");
    } finally {
      delete process.env.SWITCHYARD_CUDA_OUTPUT;
    }
    expect(outputModeFor(contiguous, "worst-case")).toBe("worst-case");
    expect(outputModeFor(contiguous, "exact")).toBe("exact");
  });

  it("refuses an explicit exact masked endpoint", () => {
    expect(outputModeFor(masked)).toBe("worst-case");
    expect(() => outputModeFor(masked, "exact")).toThrow(UnsupportedError);
    expect(() => outputModeFor(masked, "exact")).toThrow(/contiguous layout/);
  });

  it("names a bad value and the accepted ones", () => {
    expect(() => outputModeFor(contiguous, "big" as never)).toThrow(/output "big"/);
  });
});

describe("parseOutputMode (command lines)", () => {
  it("unset or empty is undefined; a mode is itself; anything else names the variable", () => {
    expect(parseOutputMode(undefined)).toBeUndefined();
    expect(parseOutputMode("")).toBeUndefined();
    expect(parseOutputMode("exact")).toBe("exact");
    expect(() => parseOutputMode("exact-size")).toThrow(
      /SWITCHYARD_CUDA_OUTPUT=exact-size: must be one of "worst-case", "exact"/,
    );
  });
});
