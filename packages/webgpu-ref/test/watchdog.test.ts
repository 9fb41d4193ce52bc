import { BackendUnavailableError, defineConfig, encodeBf16 } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { openAdapterAndDevice } from "../src/adapter.js";
import { acquireDevice } from "../src/device.js";
import { WebGpuError } from "../src/errors.js";
import { WebGpuSession } from "../src/session.js";
import { watchdog } from "../src/watchdog.js";

const never = <T>() => new Promise<T>(() => {});
const config = defineConfig({ ranks: 2, experts: 4, topK: 2, hidden: 4, maxTokensPerRank: 2 });
const input = {
  x: encodeBf16([1, 2, 3, 4]),
  topkIdx: Int32Array.from([0, 2]),
  topkWeights: Float32Array.from([1, 1]),
};

/** What `p` rejects with (null if it fulfils). */
async function settled<T>(p: Promise<T>): Promise<{ error: unknown }> {
  const error = await p.then(
    () => null,
    (e: unknown) => e,
  );
  return { error };
}

describe("watchdog: a WebGPU promise that never settles becomes a named timeout", () => {
  it("rejects with WebGpuError kind timeout naming the call and what hung", async () => {
    const { error } = await settled(watchdog(never(), 50, "dispatchRecv(rank 1)", "popErrorScope"));
    expect(error).toBeInstanceOf(WebGpuError);
    expect((error as WebGpuError).kind).toBe("timeout");
    expect((error as Error).message).toMatch(
      /dispatchRecv\(rank 1\): timeout: popErrorScope did not answer within 50 ms/,
    );
  });

  it("a hung requestAdapter or requestDevice makes the backend unavailable, saying which", async () => {
    const hungAdapter = { requestAdapter: () => never() } as unknown as GPU;
    const a = await settled(openAdapterAndDevice(hungAdapter, 50));
    expect(a.error).toBeInstanceOf(BackendUnavailableError);
    expect((a.error as Error).message).toMatch(
      /requestAdapter failed: .*requestAdapter did not answer within 50 ms/,
    );
    const adapter = {
      limits: { maxStorageBufferBindingSize: 1, maxBufferSize: 1, maxStorageBuffersPerShaderStage: 8 },
      requestDevice: () => never(),
    };
    const hungDevice = { requestAdapter: async () => adapter } as unknown as GPU;
    const d = await settled(openAdapterAndDevice(hungDevice, 50));
    expect((d.error as Error).message).toMatch(
      /requestDevice failed: .*requestDevice did not answer within 50 ms/,
    );
  });

  it("a hung popErrorScope fails the session call instead of hanging it", async () => {
    const { device } = await acquireDevice();
    const s = await WebGpuSession.create(config, { watchdogMs: 300 });
    const real = device.popErrorScope;
    device.popErrorScope = function (this: GPUDevice) {
      void real.call(this);
      return never();
    };
    try {
      const { error } = await settled(s.dispatchSend(0, input));
      expect(error).toBeInstanceOf(WebGpuError);
      expect((error as Error).message).toMatch(/timeout: popErrorScope did not answer within 300 ms/);
    } finally {
      device.popErrorScope = real;
    }
    await s.destroy();
  });

  it("a queue drain that never finishes fails destroy() instead of hanging it", async () => {
    const { device } = await acquireDevice();
    const s = await WebGpuSession.create(config, { watchdogMs: 300 });
    const real = device.queue.onSubmittedWorkDone;
    device.queue.onSubmittedWorkDone = () => never();
    try {
      const { error } = await settled(s.destroy());
      expect(error).toBeInstanceOf(WebGpuError);
      expect((error as Error).message).toMatch(
        /destroy: timeout: the queue drain \(onSubmittedWorkDone\) did not answer/,
      );
    } finally {
      device.queue.onSubmittedWorkDone = real;
    }
  });
});
