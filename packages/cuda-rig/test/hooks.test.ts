import { describe, expect, it } from "vitest";
import { hooksEnabled, TestHooks } from "../src/worker/hooks.js";

describe("worker test hooks (fault injection)", () => {
  it("are refused unless the worker was started with SWITCHYARD_TEST_HOOKS=1", () => {
    expect(hooksEnabled({})).toBe(false);
    expect(hooksEnabled({ SWITCHYARD_TEST_HOOKS: "1" })).toBe(true);
    const h = new TestHooks(1, false);
    expect(() => h.arm({ victim: 1, phase: "dispatchSend", action: "kill", stallMs: 0 })).toThrow(
      /test hooks are off; start the workers with SWITCHYARD_TEST_HOOKS=1/,
    );
  });

  it("refuse a plan with an unknown phase or action", () => {
    const h = new TestHooks(0, true);
    expect(() => h.arm({ victim: 0, phase: "dispatch" as never, action: "kill", stallMs: 0 })).toThrow(
      /unknown phase/,
    );
    expect(() => h.arm({ victim: 0, phase: "combineRecv", action: "crash" as never, stallMs: 0 })).toThrow(
      /unknown action/,
    );
  });

  it("only the victim acts, only in the planned phase, only once", async () => {
    let kills = 0;
    const victim = new TestHooks(2, true, () => {
      kills++;
      throw new Error("killed");
    });
    const other = new TestHooks(1, true, () => kills++);
    const plan = { victim: 2, phase: "combineSend", action: "kill", stallMs: 0 } as const;
    victim.arm(plan);
    other.arm(plan);
    await other.fire("combineSend");
    await victim.fire("dispatchSend");
    expect(kills).toBe(0);
    await expect(victim.fire("combineSend")).rejects.toThrow("killed");
    expect(kills).toBe(1);
    await victim.fire("combineSend"); // disarmed
    expect(kills).toBe(1);
  });

  it("a stall answers late with an error naming the rank and phase", async () => {
    const h = new TestHooks(3, true);
    h.arm({ victim: 3, phase: "dispatchRecv", action: "stall", stallMs: 50 });
    const t0 = Date.now();
    await expect(h.fire("dispatchRecv")).rejects.toThrow(
      "test hook: rank 3 stalled in dispatchRecv for 50 ms",
    );
    expect(Date.now() - t0).toBeGreaterThanOrEqual(45);
  });
});
