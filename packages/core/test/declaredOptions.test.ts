import { describe, expect, it } from "vitest";
import { refuseUndeclared, UnsupportedError } from "../src/index.js";

describe("refuseUndeclared", () => {
  const declared = { scaleFormats: ["pow2", "ue8m0"] as const, combineWeights: ["expert"] as const };

  it("passes what the backend declares, left-out fields as their defaults", () => {
    expect(() => refuseUndeclared("x", declared, {})).not.toThrow();
    expect(() =>
      refuseUndeclared("x", declared, { scaleFormat: "ue8m0", combineWeights: "expert" }),
    ).not.toThrow();
  });

  it("refuses an undeclared scale format or combine-weights mode, naming the field, the value and what it runs", () => {
    expect(() => refuseUndeclared("x", declared, { scaleFormat: "amax" })).toThrow(UnsupportedError);
    expect(() => refuseUndeclared("x", declared, { scaleFormat: "amax" })).toThrow(
      'backend x does not support scaleFormat "amax" (EpConfig.scaleFormat): it runs pow2, ue8m0; set scaleFormat to one of those, or use the reference backend for amax',
    );
    expect(() => refuseUndeclared("x", declared, { combineWeights: "home" })).toThrow(
      /combineWeights "home" \(EpConfig\.combineWeights\): it runs expert;/,
    );
  });
});
