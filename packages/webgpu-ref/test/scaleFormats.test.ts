import { defineConfig, UnsupportedError } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { webgpuBackend } from "../src/index.js";

describe("scale formats", () => {
  it("declares pow2 and ue8m0, and refuses amax before a device is asked for", async () => {
    expect(webgpuBackend.capabilities.scaleFormats).toEqual(["pow2", "ue8m0"]);
    const config = defineConfig({
      ranks: 2,
      experts: 4,
      topK: 2,
      hidden: 128,
      maxTokensPerRank: 2,
      dispatchDtype: "fp8-e4m3",
      scaleFormat: "amax",
    });
    const made = webgpuBackend.createSession(config);
    await expect(made).rejects.toThrow(UnsupportedError);
    await expect(webgpuBackend.createSession(config)).rejects.toThrow(
      /backend webgpu does not support scaleFormat "amax".*reference backend/,
    );
  });
});
