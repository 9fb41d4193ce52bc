import {
  type Backend,
  type Capabilities,
  type EpConfig,
  referenceBackend,
  UnsupportedError,
  validateConfig,
} from "@switchyard/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { configArb } from "../src/generators/config.js";
import { configSpace, type SpaceWants } from "../src/generators/space.js";
import { CapabilitiesError, runConformance, validateCapabilities } from "../src/index.js";
import { describeConformance } from "../src/vitest.js";

const caps: Capabilities = {
  layouts: ["masked"],
  inputDtypes: ["bf16"],
  dispatchDtypes: ["bf16"],
  maxRanks: 4,
  maxHidden: 192,
  maxTopK: 3,
  hiddenMultiple: 64,
  dpGroups: false,
  deterministicRowOrder: false,
};

/**
 * The reference behind narrower capabilities. It throws a plain Error (a failure) for any config
 * outside them, so the suite passing proves the generators stay inside what a backend declares;
 * 3 ranks it refuses with UnsupportedError, which the suite must filter, not fail.
 */
const limited: Backend = {
  name: "limited",
  capabilities: caps,
  unavailableReason: async () => null,
  async createSession(config: EpConfig, options) {
    validateConfig(config);
    const outside =
      !caps.layouts.includes(config.layout) ||
      !caps.inputDtypes.includes(config.inputDtype) ||
      !caps.dispatchDtypes.includes(config.dispatchDtype) ||
      config.ranks > caps.maxRanks ||
      config.hidden > caps.maxHidden ||
      config.topK > caps.maxTopK ||
      config.hidden % caps.hiddenMultiple !== 0 ||
      config.dpSize > 1;
    if (outside) throw new Error(`config outside the declared capabilities: ${JSON.stringify(config)}`);
    if (config.ranks === 3) throw new UnsupportedError("limited", "3 ranks");
    return referenceBackend.createSession(config, options);
  },
};

describe("capability gating", () => {
  it("skips what is not declared, with the reason, and passes the rest", async () => {
    const report = await runConformance(limited, { seed: 3 });
    const failed = report.results.filter((r) => r.status === "fail");
    expect(failed.map((r) => `${r.name}: ${r.error}`)).toEqual([]);
    const skipped = Object.fromEntries(
      report.results.filter((r) => r.status === "skip").map((r) => [r.name, r.reason]),
    );
    expect(Object.keys(skipped).sort()).toEqual(
      [
        "combine/home-weights/edges",
        "combine/home-weights/slot-order",
        "config/fp8-hidden",
        "dispatch/fp8/input",
        "dispatch/fp8/quantize",
        "dispatch/fp8/scale-formats",
        "dispatch/layout/contiguous",
        "dispatch/row-order",
        "dp/group-output",
        "input/missing-scales",
        "roundtrip/fp8",
        "session/stats",
      ].sort(),
    );
    expect(skipped["dp/group-output"]).toMatch(/DP groups/);
    expect(skipped["dispatch/row-order"]).toMatch(/deterministicRowOrder/);
    expect(skipped["session/stats"]).toMatch(/capabilities\.stats/);
    expect(report.results.filter((r) => r.required).every((r) => r.status === "pass")).toBe(true);
  });

  it("skips everything, with the reason, when the backend is unavailable", async () => {
    const away: Backend = { ...limited, name: "away", unavailableReason: async () => "no device here" };
    const report = await runConformance(away, { only: "dispatch" });
    expect(report.unavailable).toBe("no device here");
    expect(report.results.every((r) => r.status === "skip" && r.reason?.includes("no device here"))).toBe(
      true,
    );
  });
});

describe("scale formats by capability", () => {
  const fp8Caps: Capabilities = { ...referenceBackend.capabilities, scaleFormats: undefined };
  const draw = (c: Capabilities, wants: SpaceWants = {}) => {
    const made = configSpace(c, false, wants);
    if (!("space" in made)) return made.reason;
    const configs = fc.sample(configArb(made.space), { numRuns: 300, seed: 5 });
    return [
      ...new Set(configs.map((x) => (x.dispatchDtype === "fp8-e4m3" ? String(x.scaleFormat) : "bf16"))),
    ].sort();
  };

  it("gives a backend that declares no scaleFormats configs without the field", () => {
    expect(draw(fp8Caps)).toEqual(["bf16", "undefined"]);
    expect(draw({ ...fp8Caps, scaleFormats: ["pow2"] })).toEqual(["bf16", "undefined"]);
    expect(draw(fp8Caps, { scaleFormats: ["amax", "ue8m0"] })).toMatch(
      /declares no amax or ue8m0 scale format/,
    );
  });

  it("draws the declared formats, and leaves the field out too", () => {
    expect(draw({ ...fp8Caps, scaleFormats: ["pow2", "ue8m0"] })).toEqual([
      "bf16",
      "pow2",
      "ue8m0",
      "undefined",
    ]);
    expect(draw(referenceBackend.capabilities, { scaleFormats: ["amax", "ue8m0"] })).toEqual([
      "amax",
      "bf16",
      "ue8m0",
    ]);
  });
});

describe("combine-weights modes by capability", () => {
  const draw = (c: Capabilities, wants: SpaceWants = {}) => {
    const made = configSpace(c, false, wants);
    if (!("space" in made)) return made.reason;
    const configs = fc.sample(configArb(made.space), { numRuns: 300, seed: 7 });
    return [...new Set(configs.map((x) => `${x.layout}:${String(x.combineWeights)}`))].sort();
  };
  const expertOnly: Capabilities = { ...referenceBackend.capabilities, combineWeights: undefined };

  it("gives a backend that declares no combineWeights configs without the field", () => {
    expect(draw(expertOnly)).toEqual(["contiguous:undefined", "masked:undefined"]);
    expect(draw({ ...expertOnly, combineWeights: ["expert"] })).toEqual([
      "contiguous:undefined",
      "masked:undefined",
    ]);
    expect(draw(expertOnly, { combineWeights: ["home"] })).toMatch(/declares no combineWeights home/);
    expect(
      draw(
        { ...expertOnly, layouts: ["contiguous"], combineWeights: ["home"] },
        { combineWeights: ["home"] },
      ),
    ).toMatch(/"home" needs the masked layout/);
  });

  it("draws home for masked configs only, and expert or the field left out for both layouts", () => {
    expect(draw(referenceBackend.capabilities)).toEqual([
      "contiguous:expert",
      "contiguous:undefined",
      "masked:expert",
      "masked:home",
      "masked:undefined",
    ]);
    expect(draw(referenceBackend.capabilities, { combineWeights: ["home"], layouts: ["masked"] })).toEqual([
      "masked:home",
    ]);
  });

  it("validateCapabilities refuses an unknown mode", () => {
    const bad = { ...referenceBackend.capabilities, combineWeights: ["rank"] };
    expect(() => validateCapabilities("vendor", bad)).toThrow(
      /combineWeights = \["rank"\]: a non-empty array of distinct values from "expert", "home"/,
    );
  });
});

// The vitest adapter: gated properties show up as skipped tests with the reason in their title.
describeConformance(limited, { only: ["dispatch", "dp"] });
describeConformance(
  { ...limited, name: "away", unavailableReason: async () => "no device here" },
  { only: "dispatch/rows" },
);

describe("validateCapabilities", () => {
  const good = referenceBackend.capabilities;

  it("accepts the reference backend's and these narrower ones", () => {
    expect(validateCapabilities("reference", good)).toBe(good);
    expect(validateCapabilities("limited", caps)).toBe(caps);
  });

  it("names a missing field and what it may hold", () => {
    const { maxTopK: _, ...rest } = good;
    expect(() => validateCapabilities("vendor", rest)).toThrow(CapabilitiesError);
    expect(() => validateCapabilities("vendor", rest)).toThrow(
      /backend vendor declares bad capabilities[\s\S]*maxTopK = undefined: an integer in \[1, 4096\]/,
    );
  });

  it("names every bad value at once", () => {
    const bad = { ...good, layouts: ["masked", "packed"], maxRanks: -1, dpGroups: "yes", stats: 1 };
    try {
      validateCapabilities("vendor", bad);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(CapabilitiesError);
      const problems = (e as CapabilitiesError).problems;
      expect(problems.map((p) => p.field)).toEqual(["layouts", "maxRanks", "dpGroups", "stats"]);
      expect(problems[0].allowed).toContain('"masked", "contiguous"');
      expect((e as Error).message).toContain('dpGroups = "yes": true or false');
    }
  });

  it("refuses a non-object, empty lists, and a hiddenMultiple above maxHidden", () => {
    expect(() => validateCapabilities("v", null)).toThrow(/capabilities = null: an object with layouts/);
    expect(() => validateCapabilities("v", { ...good, inputDtypes: [] })).toThrow(/inputDtypes = \[\]/);
    expect(() => validateCapabilities("v", { ...good, maxHidden: 64, hiddenMultiple: 128 })).toThrow(
      /hiddenMultiple = 128: at most maxHidden \(64\)/,
    );
  });

  it("stops runConformance before anything runs, with the named error", async () => {
    const broken = { ...limited, capabilities: { ...caps, maxHidden: undefined } } as unknown as Backend;
    await expect(runConformance(broken, { only: "dispatch/rows" })).rejects.toThrow(
      /maxHidden = undefined: an integer/,
    );
  });
});
