import { DEFAULT_TIMEOUT_MS, referenceBackend } from "@switchyard/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runConformance } from "../src/index.js";
import { defineProperty, type PropertyContext } from "../src/property.js";

const ctx: PropertyContext = {
  backend: referenceBackend,
  caps: referenceBackend.capabilities,
  deep: false,
  sessionOptions: { timeoutMs: DEFAULT_TIMEOUT_MS },
};

/** A property over naturals whose check is `check`. */
function natProperty(check: (n: number) => Promise<void>) {
  return defineProperty<number>({
    name: "test/nat",
    required: true,
    summary: "a test property",
    arbitrary: () => fc.nat(),
    check: (_ctx, n) => check(n),
    describe: (n) => String(n),
  });
}

describe("a property's runs as the runner sees them", () => {
  it("stops at the next case once the signal aborts: interrupted, not failed", async () => {
    const stop = new AbortController();
    const ends: string[] = [];
    let checks = 0;
    const outcome = await natProperty(async () => {
      if (++checks === 5) stop.abort("test");
    }).run(ctx, {
      numRuns: 100,
      seed: 1,
      shrink: true,
      runTimeoutMs: 10_000,
      signal: stop.signal,
      onRunEnd: (end) => ends.push(end),
    });
    expect(checks).toBe(5);
    expect(ends).toEqual(["pass", "pass", "pass", "pass", "pass"]);
    expect(outcome).toMatchObject({ interrupted: true, failed: false });
  });

  it("reports a failure, with its error, and a case abandoned after runTimeoutMs as failed", async () => {
    const ends: [string, string | undefined][] = [];
    const outcome = await natProperty(async (n) => {
      if (n % 2 === 1) throw new Error(`odd ${n}`);
    }).run(ctx, {
      numRuns: 50,
      seed: 2,
      shrink: false,
      runTimeoutMs: 10_000,
      onRunEnd: (e, error) => ends.push([e, error]),
    });
    expect(outcome.failed).toBe(true);
    expect(ends.at(-1)?.[0]).toBe("fail");
    expect(ends.at(-1)?.[1]).toMatch(/^Error: odd \d+/);

    const slow: [string, string | undefined][] = [];
    let first = true;
    await natProperty(async () => {
      if (first) {
        first = false;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }).run(ctx, {
      numRuns: 3,
      seed: 3,
      shrink: true,
      runTimeoutMs: 20,
      onRunEnd: (e, error) => slow.push([e, error]),
    });
    // The first case outlives fc.timeout: failed when the next (a shrink step) starts, never passed later.
    expect(slow[0]).toEqual(["fail", "the case ran longer than 20 ms"]);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(slow.filter(([e]) => e === "fail")).toHaveLength(1);
  });
});

describe("runConformance with a signal", () => {
  it("aborted before it starts: interrupted, nothing run, everything in notRun, not ok", async () => {
    const stop = new AbortController();
    stop.abort("SIGTERM");
    const report = await runConformance(referenceBackend, {
      only: "session/layout,dispatch/rows",
      numRuns: 3,
      signal: stop.signal,
    });
    expect(report).toMatchObject({ ok: false, interrupted: true, results: [] });
    expect(report.interruption).toEqual({
      reason: "SIGTERM",
      property: null,
      notRun: ["session/layout", "dispatch/rows"],
    });
  });

  it("not aborted: a normal report, interrupted false", async () => {
    const report = await runConformance(referenceBackend, {
      only: "session/layout",
      numRuns: 3,
      signal: new AbortController().signal,
    });
    expect(report).toMatchObject({ ok: true, interrupted: false });
    expect(report.interruption).toBeUndefined();
  });
});
