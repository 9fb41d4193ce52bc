import { defineConfig, UnsupportedError } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { webgpuBackend } from "../src/index.js";

describe("combine weights", () => {
  it("declares expert only, and refuses home before a device is asked for", async () => {
    expect(webgpuBackend.capabilities.combineWeights).toEqual(["expert"]);
    const config = defineConfig({
      ranks: 2,
      experts: 4,
      topK: 2,
      hidden: 64,
      maxTokensPerRank: 2,
      combineWeights: "home",
    });
    const made = webgpuBackend.createSession(config);
    await expect(made).rejects.toThrow(UnsupportedError);
    await expect(webgpuBackend.createSession(config)).rejects.toThrow(
      /backend webgpu does not support combineWeights "home" \(EpConfig\.combineWeights\).*set it to "expert".*reference backend/,
    );
  });
});
