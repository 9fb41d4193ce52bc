import { fileURLToPath } from "node:url";
import { TimeoutError } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { WorkerGroup, workerEnv } from "../src/launcher.js";
import { WorkerExitError, WorkerTimeoutError } from "../src/workerErrors.js";

const fake = fileURLToPath(new URL("./fixtures/fakeWorker.mjs", import.meta.url));

describe("WorkerGroup (stand-in workers, no GPU)", () => {
  it("relays rank 0's unique id to every rank and keeps NVLink multicast off", async () => {
    const g = await WorkerGroup.launch({ ranks: 3, workerPath: fake, devices: [2, 1, 0] });
    try {
      expect(g.info).toEqual([
        { rank: 0, ranks: 3, device: 2, idByte: 7, native: {} },
        { rank: 1, ranks: 3, device: 1, idByte: 7, native: {} },
        { rank: 2, ranks: 3, device: 0, idByte: 7, native: {} },
      ]);
      const env = await g.call<Record<string, string>>(1, "env", {}, 5000);
      expect(env).toEqual({
        NVSHMEM_DISABLE_NVLS: "1",
        NCCL_NVLS_ENABLE: "0",
        SWITCHYARD_RANK: "1",
        SWITCHYARD_DEVICE: "1",
      });
    } finally {
      await g.close();
    }
  });

  it("places ranks and creates runtimes as its options say: one rank per GPU and the library's defaults without them", async () => {
    const plain = await WorkerGroup.launch({ ranks: 3, workerPath: fake });
    try {
      expect(plain.info.map((i) => (i as { device: number }).device)).toEqual([0, 1, 2]);
      expect(plain.info.map((i) => (i as { native: unknown }).native)).toEqual([{}, {}, {}]);
    } finally {
      await plain.close();
    }
    const native = { transport: "put", pointerChecks: false } as const;
    const shared = await WorkerGroup.launch({ ranks: 3, workerPath: fake, ranksPerGpu: 2, native });
    try {
      expect(shared.info.map((i) => (i as { device: number }).device)).toEqual([0, 0, 1]);
      expect(shared.info.map((i) => (i as { native: unknown }).native)).toEqual([native, native, native]);
      expect(await shared.call<Record<string, string>>(2, "env", {}, 5000)).toMatchObject({
        SWITCHYARD_DEVICE: "1",
      });
    } finally {
      await shared.close();
    }
  });

  it("fails every pending call with the crashed worker's exit code, never hangs", async () => {
    const g = await WorkerGroup.launch({ ranks: 2, workerPath: fake });
    const waiting = g.call(0, "hang", {}, 60_000);
    const crash = g.call(1, "crash", { code: 3 }, 60_000);
    await expect(waiting).rejects.toThrow(WorkerExitError);
    await expect(crash).rejects.toThrow(/rank 1: worker process exited \(exit code 3\)/);
    await expect(g.call(0, "env", {}, 1000)).rejects.toBeInstanceOf(WorkerExitError);
    await g.close();
  });

  it("with failFast off, a dead worker fails only its own calls and the launcher keeps its exit reason", async () => {
    const g = await WorkerGroup.launch({ ranks: 2, workerPath: fake, failFast: false });
    try {
      const crash = g.call(1, "crash", { code: 9 }, 60_000);
      await expect(crash).rejects.toThrow(
        /rank 1: worker process exited \(exit code 9\): while answering crash/,
      );
      expect(g.failure).toBeNull();
      expect(g.exitOf(1)?.exitCode).toBe(9);
      expect(g.exitOf(0)).toBeNull();
      await expect(g.call(1, "env", {}, 1000)).rejects.toBe(g.exitOf(1));
      expect(await g.call<Record<string, string>>(0, "env", {}, 5000)).toMatchObject({
        SWITCHYARD_RANK: "0",
      });
      await expect(g.call(0, "hang", {}, 100)).rejects.toBeInstanceOf(WorkerTimeoutError);
      expect(g.failure).toBeNull();
    } finally {
      await g.close();
    }
  });

  it("times out a worker that does not answer", async () => {
    const g = await WorkerGroup.launch({ ranks: 1, workerPath: fake });
    await expect(g.call(0, "hang", {}, 200)).rejects.toBeInstanceOf(WorkerTimeoutError);
    expect(g.failure).toBeInstanceOf(WorkerTimeoutError);
    await g.close();
  });

  it("rebuilds a worker's named error with its class and fields", async () => {
    const g = await WorkerGroup.launch({ ranks: 1, workerPath: fake });
    const e = await g.call(0, "fail", {}, 5000).catch((x) => x);
    expect(e).toBeInstanceOf(TimeoutError);
    expect(e).toMatchObject({ rank: 0, peer: 1, stage: "dispatch recv", timeoutMs: 5, name: "TimeoutError" });
    await g.close();
  });

  it("bootstrap failure surfaces as an error, not a hang", async () => {
    await expect(
      WorkerGroup.launch({
        ranks: 2,
        workerPath: fileURLToPath(new URL("./fixtures/exitAtStart.mjs", import.meta.url)),
        initTimeoutMs: 5000,
      }),
    ).rejects.toBeInstanceOf(WorkerExitError);
  });

  it("workerEnv forces multicast off over the caller's environment", () => {
    const env = workerEnv({ NVSHMEM_DISABLE_NVLS: "0", PATH: "/bin" }, 2, 4, 3, { NCCL_NVLS_ENABLE: "1" });
    expect(env).toMatchObject({
      NVSHMEM_DISABLE_NVLS: "1",
      NCCL_NVLS_ENABLE: "0",
      PATH: "/bin",
      SWITCHYARD_DEVICE: "3",
    });
  });
});
