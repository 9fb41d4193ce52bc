import {
  ConfigError,
  DestroyedError,
  defineConfig,
  InputError,
  PhaseError,
  ReferenceSession,
  UnsupportedError,
} from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { createBackend, unavailableReason, WebGpuError, webgpuBackend } from "../src/index.js";
import { WebGpuSession } from "../src/session.js";
import { randomExpertOut, randomInputs, rng, runStep } from "./helpers.js";

const config = defineConfig({ ranks: 2, experts: 4, topK: 2, hidden: 6, maxTokensPerRank: 4 });

describe("the backend object", () => {
  it("is available here, named webgpu, with honest capabilities", async () => {
    expect(await unavailableReason()).toBeNull();
    expect(await webgpuBackend.unavailableReason()).toBeNull();
    expect(createBackend()).toBe(webgpuBackend);
    expect(webgpuBackend.name).toBe("webgpu");
    const c = webgpuBackend.capabilities;
    expect([...c.layouts]).toEqual(["masked", "contiguous"]);
    expect([...c.dispatchDtypes]).toEqual(["bf16", "fp8-e4m3"]);
    expect(c.dpGroups && c.deterministicRowOrder).toBe(true);
  });

  it("refuses a bad config with core's ConfigError", async () => {
    await expect(webgpuBackend.createSession({ ...config, experts: 3 })).rejects.toThrow(ConfigError);
  });

  it("refuses a config beyond the device's limits with UnsupportedError", async () => {
    // masked dispatchX alone: 64 experts x 64 ranks x 4096 tokens x 8192 bytes > 4 GiB
    const huge = defineConfig({ ranks: 64, experts: 4096, topK: 8, hidden: 4096, maxTokensPerRank: 4096 });
    await expect(webgpuBackend.createSession(huge)).rejects.toThrow(UnsupportedError);
    await expect(webgpuBackend.createSession(huge)).rejects.toThrow(/does not fit in a u32|maxBufferSize/);
  });
});

describe("bad calls are refused before anything moves, and the session keeps working", () => {
  it("input errors, phase errors, then a valid step equal to the reference", async () => {
    const s = await WebGpuSession.create(config);
    const ref = new ReferenceSession(config);
    const rand = rng(5);
    const inputs = randomInputs(config, rand, { tokens: 4 });
    const out = randomExpertOut(s.layout.rows, config.hidden, rand);
    const bad = { ...inputs[0], topkIdx: Int32Array.from(inputs[0].topkIdx, (e, i) => (i === 3 ? 4 : e)) };
    await expect(s.dispatchSend(0, bad)).rejects.toThrow(InputError);
    await expect(s.dispatchSend(0, { ...inputs[0], x: new Uint8Array(24) })).rejects.toThrow(
      /expected Uint16Array/,
    );
    await expect(s.dispatchSend(2, inputs[0])).rejects.toThrow(
      /rank 2: rank: must be an integer in \[0, 2\)/,
    );
    await expect(s.dispatchRecv(0)).rejects.toThrow(PhaseError);
    await expect(s.combineSend(0, out)).rejects.toThrow(PhaseError);
    await expect(s.combineRecv(1)).rejects.toThrow(/combineRecv must follow combineSend/);
    await s.dispatchSend(0, inputs[0]);
    await expect(s.dispatchSend(0, inputs[0])).rejects.toThrow(PhaseError);
    await s.dispatchSend(1, inputs[1]);
    await s.dispatchRecv(0);
    await expect(s.combineSend(0, new Uint16Array(3))).rejects.toThrow(/expertOut: length 3/);
    await s.dispatchRecv(1);
    for (const r of [0, 1]) await s.combineSend(r, out);
    const y = [await s.combineRecv(0), await s.combineRecv(1)];
    expect(y.map((a) => Array.from(a))).toEqual((await runStep(ref, inputs, out)).map((a) => Array.from(a)));
    // and the next step still works
    expect((await runStep(s, inputs, out)).map((a) => Array.from(a))).toEqual(
      (await runStep(ref, inputs, out)).map((a) => Array.from(a)),
    );
    await s.destroy();
  });

  it("calls made without waiting run in order", async () => {
    const s = await WebGpuSession.create(config);
    const ref = new ReferenceSession(config);
    const rand = rng(6);
    const inputs = randomInputs(config, rand);
    const out = randomExpertOut(s.layout.rows, config.hidden, rand);
    const calls = [
      s.dispatchSend(1, inputs[1]),
      s.dispatchSend(0, inputs[0]),
      s.dispatchRecv(1),
      s.combineSend(1, out),
      s.dispatchRecv(0),
      s.combineSend(0, out),
    ];
    await Promise.all(calls);
    const y = await Promise.all([s.combineRecv(0), s.combineRecv(1)]);
    expect(y.map((a) => Array.from(a))).toEqual((await runStep(ref, inputs, out)).map((a) => Array.from(a)));
    await s.destroy();
  });
});

describe("destroy", () => {
  it("frees the session; every later call throws DestroyedError", async () => {
    const s = await webgpuBackend.createSession(config);
    const inputs = randomInputs(config, rng(1));
    await s.dispatchSend(0, inputs[0]);
    await s.destroy();
    await s.destroy();
    await expect(s.dispatchSend(1, inputs[1])).rejects.toThrow(DestroyedError);
    await expect(s.dispatchRecv(0)).rejects.toThrow(DestroyedError);
    await expect(s.combineRecv(0)).rejects.toThrow(/destroyed/);
  });
});

describe("WebGPU failures fail the call with a clear error, never zeros", () => {
  it("a validation error inside a submission is a WebGpuError naming the call", async () => {
    const s = await WebGpuSession.create(config);
    const inputs = randomInputs(config, rng(2));
    // Break the session from inside: a destroyed heap makes the submission invalid.
    (s as unknown as { ctx: { res: { heaps: GPUBuffer[] } } }).ctx.res.heaps[1].destroy();
    const e = await s.dispatchSend(0, inputs[0]).then(
      () => null,
      (err) => err,
    );
    expect(e).toBeInstanceOf(WebGpuError);
    expect(e.message).toMatch(/dispatchSend\(rank 0\): validation: /);
    await s.destroy();
  });

  it("device loss fails calls with WebGpuError; a new session gets a new device", async () => {
    const s = await WebGpuSession.create(config);
    const inputs = randomInputs(config, rng(3), { tokens: 2 });
    await s.dispatchSend(0, inputs[0]);
    const device = (s as unknown as { ctx: { engine: { handle: { device: GPUDevice } } } }).ctx.engine.handle
      .device;
    device.destroy();
    await device.lost;
    await expect(s.dispatchSend(1, inputs[1])).rejects.toThrow(/device-lost/);
    await s.destroy();
    const again = await WebGpuSession.create(config);
    const ref = new ReferenceSession(config);
    const out = randomExpertOut(again.layout.rows, config.hidden, rng(4));
    expect((await runStep(again, inputs, out)).map((a) => Array.from(a))).toEqual(
      (await runStep(ref, inputs, out)).map((a) => Array.from(a)),
    );
    await again.destroy();
  });
});
