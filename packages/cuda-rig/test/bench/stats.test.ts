import { describe, expect, it } from "vitest";
import { maxOverRanks, quantile, summarize } from "../../src/bench/stats.js";

describe("bench statistics", () => {
  it("quantile interpolates between the nearest ranks (type 7)", () => {
    const s = [10, 20, 30, 40, 50];
    expect(quantile(s, 0)).toBe(10);
    expect(quantile(s, 1)).toBe(50);
    expect(quantile(s, 0.5)).toBe(30);
    expect(quantile(s, 0.9)).toBeCloseTo(46, 10);
    expect(quantile([1, 2], 0.5)).toBe(1.5);
    expect(quantile([7], 0.99)).toBe(7);
    expect(quantile([], 0.5)).toBeNaN();
    expect(() => quantile(s, 1.1)).toThrow(RangeError);
  });

  it("summarize: median, p90, p99 of 1..100 in any order", () => {
    const xs = Array.from({ length: 100 }, (_, i) => ((i * 37) % 100) + 1);
    const st = summarize(xs);
    expect(st).toMatchObject({ n: 100, min: 1, max: 100, mean: 50.5 });
    expect(st.median).toBeCloseTo(50.5, 10);
    expect(st.p90).toBeCloseTo(90.1, 10);
    expect(st.p99).toBeCloseTo(99.01, 10);
    expect(xs[0]).toBe(1); // input untouched
    expect(summarize([]).n).toBe(0);
  });

  it("maxOverRanks takes each step's slowest rank", () => {
    expect(
      maxOverRanks([
        [1, 5, 3],
        [4, 2, 3],
        [0, 0, 9],
      ]),
    ).toEqual([4, 5, 9]);
    expect(maxOverRanks([])).toEqual([]);
    expect(() => maxOverRanks([[1, 2], [1]])).toThrow(/rank 1 has 1 samples/);
  });

  it("the step-wise max differs from the max of per-rank medians", () => {
    // Ranks alternate being slow: each rank's median is 1, but every step waits for a slow rank.
    const a = [1, 9, 1, 9, 1];
    const b = [9, 1, 9, 1, 1];
    expect(summarize(maxOverRanks([a, b])).median).toBe(9);
    expect(Math.max(summarize(a).median, summarize(b).median)).toBe(1);
  });
});
