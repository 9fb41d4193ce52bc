import { defineConfig } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { acquireDevice } from "../src/device.js";
import { planSession } from "../src/plan.js";
import { KERNELS, type KernelName } from "../src/schema.js";
import { kernelsFor } from "../src/shaders.js";

describe("a session compiles its own kernels, never the codec probe's", () => {
  it("the session set holds every stage kernel and no probe; the probe set only the probes", async () => {
    const handle = await acquireDevice();
    const { names } = planSession(
      defineConfig({ ranks: 1, experts: 1, topK: 1, hidden: 1, maxTokensPerRank: 1 }),
      handle.device.limits,
    );
    const all = Object.keys(KERNELS) as KernelName[];
    const probes = all.filter((n) => KERNELS[n].file === "codec_probe");
    expect(probes.length).toBeGreaterThan(0);
    const session = await kernelsFor(handle, names);
    expect([...session.names].sort()).toEqual(all.filter((n) => !probes.includes(n)).sort());
    expect(() => session.pipeline(probes[0])).toThrow(/not in the session kernels/);
    const probe = await kernelsFor(handle, names, "codecProbe");
    expect([...probe.names].sort()).toEqual([...probes].sort());
  });
});
