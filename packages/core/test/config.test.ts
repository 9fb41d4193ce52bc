import { describe, expect, it } from "vitest";
import { ConfigError, defineConfig, type EpConfigInput } from "../src/index.js";

const good: EpConfigInput = { ranks: 4, experts: 16, topK: 4, hidden: 256, maxTokensPerRank: 8 };

function refusal(patch: Record<string, unknown>): ConfigError {
  try {
    defineConfig({ ...good, ...patch } as EpConfigInput);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error(`config ${JSON.stringify(patch)} was accepted`);
}

describe("defineConfig", () => {
  it("fills defaults and freezes", () => {
    const c = defineConfig(good);
    expect(c).toMatchObject({
      dpSize: 1,
      inputDtype: "bf16",
      dispatchDtype: "bf16",
      layout: "masked",
      expertAlignment: 1,
    });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it.each([
    [{ ranks: 0 }, "ranks"],
    [{ ranks: 2.5 }, "ranks"],
    [{ ranks: "4" }, "ranks"],
    [{ dpSize: 3 }, "dpSize"],
    [{ dpSize: 8 }, "dpSize"],
    [{ experts: 18 }, "experts"],
    [{ topK: 0 }, "topK"],
    [{ topK: 17 }, "topK"],
    [{ hidden: -1 }, "hidden"],
    [{ maxTokensPerRank: 0 }, "maxTokensPerRank"],
    [{ maxTokensPerRank: 1 << 21 }, "maxTokensPerRank"],
    [{ expertAlignment: 0 }, "expertAlignment"],
    [{ inputDtype: "fp16" }, "inputDtype"],
    [{ dispatchDtype: "int8" }, "dispatchDtype"],
    [{ inputDtype: "fp8-e4m3", dispatchDtype: "bf16" }, "dispatchDtype"],
    [{ dispatchDtype: "fp8-e4m3", hidden: 200 }, "hidden"],
    [{ layout: "dense" }, "layout"],
    [{ extra: 1 }, "extra"],
  ])("refuses %j naming field %s", (patch, field) => {
    const err = refusal(patch);
    expect(err.field).toBe(field);
    expect(err.message).toContain(`EpConfig.${field}`);
    expect(err.message).toContain(JSON.stringify((patch as Record<string, unknown>)[field]));
  });

  it("accepts fp8 input with fp8 dispatch and hidden a multiple of 128", () => {
    expect(
      defineConfig({ ...good, inputDtype: "fp8-e4m3", dispatchDtype: "fp8-e4m3", hidden: 384 }).hidden,
    ).toBe(384);
  });
});
