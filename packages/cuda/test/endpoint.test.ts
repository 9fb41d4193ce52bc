import {
  computeLayout,
  DestroyedError,
  defineConfig,
  InputError,
  PARAM_NAMES,
  PhaseError,
  type RegionName,
  TimeoutError,
  UnsupportedError,
} from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { RankEndpoint, readDispatchResult } from "../src/endpoint.js";
import type { NativeAddon, NativeEndpoint } from "../src/native/types.js";
import type { CudaRuntime } from "../src/runtime.js";

/** A native endpoint that records calls (argument checks happen before any of them). */
function fake(): { native: NativeEndpoint; calls: string[] } {
  const calls: string[] = [];
  const native: NativeEndpoint = {
    region: () => ({ ptr: 0x1000n, bytes: 256 }),
    counts: () => 0x2000n,
    dispatchSend: (...a) => void calls.push(`dispatchSend ${a.join(" ")}`),
    dispatchRecv: () => void calls.push("dispatchRecv"),
    combineSend: () => void calls.push("combineSend"),
    combineRecv: () => void calls.push("combineRecv"),
    dispatch: (...a) => void calls.push(`dispatch ${a.join(" ")}`),
    combine: (...a) => void calls.push(`combine ${a.join(" ")}`),
    check: async () => {
      throw Object.assign(new Error("rank 0, dispatch recv: waited"), {
        code: "SY_ERR_TIMEOUT",
        info: { code: 1, stage: 1, peer: 1, region: 0, detail0: 0, detail1: 1 },
      });
    },
    setBlocks: (n) => void calls.push(`setBlocks ${n}`),
    setOutput: (exact) => void calls.push(`setOutput ${exact}`),
    recvRows: async (stream) => {
      calls.push(`recvRows ${stream}`);
      return 12;
    },
    recvInto: (...a) => void calls.push(`recvInto ${a.join(" ")}`),
    memory: () => ({ deviceBytes: 1, localBytes: 0 }),
    enableStats: () => void calls.push("enableStats"),
    stats: (ranks, stream) => {
      calls.push(`stats ${ranks} ${stream}`);
      const z = (v: number) => Array.from({ length: ranks }, (_, p) => v + p);
      return {
        dispatchSent: z(1),
        dispatchReceived: z(2),
        combineSent: z(3),
        combineReceived: z(4),
        dispatchWaitNs: z(1_500_000),
        combineWaitNs: z(2_000_000),
      };
    },
    destroy: () => void calls.push("destroy"),
  };
  return { native, calls };
}

/** A runtime whose addon makes `native` for every endpoint. */
function runtimeOf(native: NativeEndpoint, rank = 0): CudaRuntime {
  const addon = {
    Endpoint: function Endpoint() {
      return native;
    },
  } as unknown as NativeAddon;
  return { addon, native: {}, rank, ranks: 2 } as unknown as CudaRuntime;
}

const config = defineConfig({ ranks: 2, experts: 4, topK: 2, hidden: 64, maxTokensPerRank: 8 });

/** An endpoint of `config` over the fake native side, and tensors that fit it (8 tokens). */
function wrapped() {
  const { native, calls } = fake();
  const ep = RankEndpoint.wrap(config, native, {} as NativeAddon, 0, 250);
  const x = { ptr: 0x10n, bytes: 8 * 64 * 2 };
  const idx = { ptr: 0x20n, bytes: 8 * 2 * 4 };
  const w = { ptr: 0x50n, bytes: 8 * 2 * 4 };
  return { ep, calls, x, idx, w };
}

describe("RankEndpoint argument checks (no GPU)", () => {
  it("refuses token counts, missing or short tensors before calling the native side", () => {
    const { ep, calls, x, idx, w } = wrapped();
    expect(() => ep.dispatchSend({ x, topkIdx: idx, topkWeights: w, numTokens: 9 })).toThrow(InputError);
    expect(() => ep.dispatchSend({ x, topkIdx: idx, topkWeights: w, numTokens: 1.5 })).toThrow(
      /numTokens 1.5/,
    );
    expect(() =>
      ep.dispatchSend({ x: { ptr: 0x10n, bytes: 10 }, topkIdx: idx, topkWeights: w, numTokens: 8 }),
    ).toThrow(/x: holds 10 bytes, needs 1024/);
    expect(() => ep.dispatchSend({ x, scales: 0x30n, topkIdx: idx, topkWeights: w, numTokens: 8 })).toThrow(
      /inputDtype is bf16/,
    );
    expect(() =>
      ep.dispatchSend({ x, topkIdx: idx, topkWeights: { ptr: 0x50n, bytes: 4 }, numTokens: 8 }),
    ).toThrow(/topkWeights: holds 4 bytes/);
    expect(() => ep.combineSend({ ptr: 0x40n, bytes: 100 })).toThrow(/expertOut: holds 100 bytes/);
    expect(calls).toEqual([]);
    ep.dispatchSend({ x, topkIdx: 0x20n, topkWeights: 0x50n, numTokens: 8 }, 7n);
    ep.dispatchSend({ x: 0n, topkIdx: 0n, topkWeights: 0n, numTokens: 0 });
    expect(calls).toEqual(["dispatchSend 16 0 32 80 8 7", "dispatchSend 0 0 0 0 0 0"]);
  });

  it("dispatch and combine (a half in one call) check as the phases do, naming themselves", () => {
    const { ep, calls, x, idx, w } = wrapped();
    const y = { ptr: 0x60n, bytes: 8 * 64 * 2 };
    const out = { ptr: 0x40n, bytes: ep.layout.rows * 64 * 2 };
    expect(() => ep.dispatch({ x, topkIdx: idx, topkWeights: w, numTokens: 9 })).toThrow(/dispatch/);
    expect(() =>
      ep.dispatch({ x: { ptr: 0x10n, bytes: 10 }, topkIdx: idx, topkWeights: w, numTokens: 8 }),
    ).toThrow(/x: holds 10 bytes, needs 1024/);
    expect(() => ep.combine({ ptr: 0x40n, bytes: 100 }, { topkIdx: idx, numTokens: 8, y })).toThrow(
      /expertOut: holds 100 bytes/,
    );
    expect(() => ep.combine(out, { topkIdx: idx, numTokens: 8, y: { ptr: 0x60n, bytes: 2 } })).toThrow(
      /y: holds 2 bytes/,
    );
    expect(calls).toEqual([]);
    ep.dispatch({ x, topkIdx: 0x20n, topkWeights: 0x50n, numTokens: 8 }, 7n);
    ep.combine(out, { topkIdx: 0x20n, numTokens: 8, y }, 7n);
    expect(calls).toEqual(["dispatch 16 0 32 80 8 7", "combine 64 32 0 8 96 7"]);
  });

  it("synchronize maps the native timeout to TimeoutError(rank, peer, stage)", async () => {
    const ep = RankEndpoint.wrap(config, fake().native, {} as NativeAddon, 0, 250);
    const e = await ep.synchronize().catch((x) => x);
    expect(e).toBeInstanceOf(TimeoutError);
    expect(e).toMatchObject({ rank: 0, peer: 1, stage: "dispatch recv", timeoutMs: 250 });
  });

  it("a bad expert id the device found becomes InputError on topkIdx, bounded by the config's experts", async () => {
    const { native } = fake();
    native.check = async () => {
      throw Object.assign(new Error("rank 0, dispatch send: topk_idx[3][1] = 9 is outside [-1, 4)"), {
        code: "SY_ERR_INVALID_ARGUMENT",
        info: { code: 7, stage: 3, peer: 9, region: 0xffffffff, detail0: 3, detail1: 1 },
      });
    };
    const ep = RankEndpoint.wrap(config, native, {} as NativeAddon, 0, 250);
    const e = await ep.synchronize().catch((x) => x);
    expect(e).toBeInstanceOf(InputError);
    expect(e).toMatchObject({ rank: 0, what: "topkIdx" });
    expect(e.message).toMatch(
      /^rank 0: topkIdx: \[3\]\[1\] = 9 is outside \[-1, 4\) \(found by dispatch send/,
    );
  });

  it("refuses use after destroy()", () => {
    const { native, calls } = fake();
    const ep = RankEndpoint.wrap(config, native, {} as NativeAddon, 1);
    ep.destroy();
    ep.destroy();
    expect(calls).toEqual(["destroy"]);
    expect(() => ep.dispatchRecv()).toThrow(DestroyedError);
  });

  it("readStats asks for the config's ranks and turns the kernels' nanoseconds into milliseconds", () => {
    const { native, calls } = fake();
    const ep = RankEndpoint.wrap(config, native, {} as NativeAddon, 0);
    ep.enableStats();
    expect(ep.readStats(5n)).toEqual({
      dispatchSent: [1, 2],
      dispatchReceived: [2, 3],
      combineSent: [3, 4],
      combineReceived: [4, 5],
      dispatchWaitMs: [1.5, 1.500001],
      combineWaitMs: [2, 2.000001],
    });
    expect(calls).toEqual(["enableStats", "stats 2 5"]);
  });

  it("a native phase-order refusal becomes PhaseError naming the call", () => {
    const { native } = fake();
    native.combineSend = () => {
      throw Object.assign(
        new Error(
          "endpoint_checks.cc:48: sy_combine_send: called out of order: the endpoint's next call is sy_dispatch_recv",
        ),
        { code: "SY_ERR_PHASE" },
      );
    };
    const ep = RankEndpoint.wrap(config, native, {} as NativeAddon, 1);
    const e = (() => {
      try {
        ep.combineSend({ ptr: 0x40n, bytes: 1 << 20 });
      } catch (x) {
        return x;
      }
    })();
    expect(e).toBeInstanceOf(PhaseError);
    expect(e).toMatchObject({ rank: 1, phase: "combineSend" });
  });

  it("a native phase refusal names the endpoint call that was made, whatever its message names", () => {
    const { native } = fake();
    native.setBlocks = () => {
      throw Object.assign(new Error("sy_dispatch_recv: between steps only"), { code: "SY_ERR_PHASE" });
    };
    const ep = RankEndpoint.wrap(config, native, {} as NativeAddon, 1);
    expect(() => ep.setBlocks(4)).toThrow(PhaseError);
    try {
      ep.setBlocks(4);
    } catch (e) {
      expect(e).toMatchObject({ rank: 1, phase: "setBlocks" });
    }
  });

  it("a check in flight when destroy() runs rejects with DestroyedError; on a live endpoint a state error stays NativeError", async () => {
    const { native } = fake();
    const state = (message: string) => Object.assign(new Error(message), { code: "SY_ERR_STATE", status: 7 });
    let reject: (e: unknown) => void = () => {};
    native.check = () => new Promise((_, r) => (reject = r));
    const ep = RankEndpoint.wrap(config, native, {} as NativeAddon, 1);
    const pending = ep.synchronize();
    ep.destroy();
    reject(state("sy_endpoint_check: ep (0x1) is being torn down"));
    await expect(pending).rejects.toBeInstanceOf(DestroyedError);

    const live = fake().native;
    live.check = async () => {
      throw state("an earlier step failed (rank 1, dispatch recv, ...); the endpoint was destroyed? no");
    };
    const other = RankEndpoint.wrap(config, live, {} as NativeAddon, 1);
    await expect(other.synchronize()).rejects.toMatchObject({ name: "NativeError", code: "SY_ERR_STATE" });
  });

  it("create takes every scale format and both combine-weights modes, their codes in the parameter block", () => {
    const blocks: bigint[][] = [];
    const addon = {
      Endpoint: function Endpoint(_rt: unknown, params: BigUint64Array | bigint[]) {
        blocks.push(Array.from(params, BigInt));
        return fake().native;
      },
    } as unknown as NativeAddon;
    const runtime = { addon, native: {}, rank: 0, ranks: 2 } as unknown as CudaRuntime;
    const fp8 = { ...config, hidden: 128, dispatchDtype: "fp8-e4m3" as const };
    for (const scaleFormat of ["pow2", "amax", "ue8m0"] as const) {
      RankEndpoint.create(runtime, defineConfig({ ...fp8, scaleFormat }));
    }
    RankEndpoint.create(runtime, defineConfig({ ...config, combineWeights: "home" }));
    const at = (name: string) => PARAM_NAMES.indexOf(name);
    expect(blocks.map((b) => b[at("scaleFormat")])).toEqual([0n, 1n, 2n, 0n]);
    expect(blocks.map((b) => b[at("combineAtHome")])).toEqual([0n, 0n, 0n, 1n]);
  });

  it("weights at home: dispatchSend refuses weights, combineRecv requires them", () => {
    const { native, calls } = fake();
    const runtime = runtimeOf(native);
    const ep = RankEndpoint.create(runtime, defineConfig({ ...config, combineWeights: "home" }));
    const t = (bytes: number) => ({ ptr: 0x100n, bytes });
    const send = { x: t(4 * 64 * 2), topkIdx: t(4 * 2 * 4), numTokens: 4 };
    expect(() => ep.dispatchSend({ ...send, topkWeights: t(4 * 2 * 4) })).toThrow(
      /topkWeights: given to dispatchSend, but combineWeights is "home": pass the weights to combineRecv/,
    );
    ep.dispatchSend(send);
    expect(calls.at(-1)).toBe("dispatchSend 256 0 256 0 4 0");
    const recv = { topkIdx: t(4 * 2 * 4), numTokens: 4, y: t(4 * 64 * 2) };
    expect(() => ep.combineRecv(recv)).toThrow(/topkWeights: is missing/);
    ep.combineRecv({ ...recv, topkWeights: t(4 * 2 * 4) });
    expect(calls.at(-1)).toBe("combineRecv");
  });

  it("create accepts the contiguous layout and hands the native side its layout", () => {
    const { native } = fake();
    const made: bigint[] = [];
    const addon = {
      Endpoint: function Endpoint(_rt: unknown, _params: unknown, symmetricBytes: bigint) {
        made.push(symmetricBytes);
        return native;
      },
    } as unknown as NativeAddon;
    const runtime = { addon, native: {}, rank: 0, ranks: 2 } as unknown as CudaRuntime;
    const c = defineConfig({ ...config, layout: "contiguous", expertAlignment: 4 });
    const ep = RankEndpoint.create(runtime, c);
    expect(ep.layout.config.layout).toBe("contiguous");
    expect(made).toEqual([BigInt(computeLayout(c).symmetricBytes)]);
  });

  it("exact output: rows (one synchronisation, in the native call), then buffers of exactly that many rows, combine send sized by the step", async () => {
    const { native, calls } = fake();
    const runtime = runtimeOf(native, 1);
    const c = defineConfig({ ...config, layout: "contiguous", expertAlignment: 4 });
    const ep = RankEndpoint.create(runtime, c, { output: "exact" });
    expect(ep.output).toBe("exact");
    expect(calls).toEqual(["setOutput true"]);
    ep.dispatchRecv(3n);
    const x = { ptr: 0x100n, bytes: 12 * 64 * 2 };
    expect(() => ep.dispatchRecvInto({ x }, 3n)).toThrow(PhaseError);
    expect(await ep.dispatchRecvRows(3n)).toBe(12);
    expect(() => ep.dispatchRecvInto({ x: { ptr: 0x100n, bytes: 11 * 64 * 2 } }, 3n)).toThrow(
      /x: holds 1408 bytes, needs 1536/,
    );
    expect(() => ep.dispatchRecvInto({ x, scales: 0x200n }, 3n)).toThrow(/dispatchDtype is bf16/);
    ep.dispatchRecvInto({ x }, 3n);
    // expert_out is the step's 12 rows, not the layout's.
    expect(() => ep.combineSend({ ptr: 0x300n, bytes: 12 * 64 * 2 - 2 }, 3n)).toThrow(/needs 1536/);
    ep.combineSend({ ptr: 0x300n, bytes: 12 * 64 * 2 }, 3n);
    expect(calls).toEqual([
      "setOutput true",
      "dispatchRecv",
      "recvRows 3",
      "recvInto 256 0 3",
      "combineSend",
    ]);
  });

  it("exact output: a receive that timed out while dispatchRecvRows waited is TimeoutError(rank, peer, stage)", async () => {
    const { native } = fake();
    native.recvRows = async () => {
      throw Object.assign(new Error("rank 1, dispatch recv: waited"), {
        code: "SY_ERR_TIMEOUT",
        info: { code: 1, stage: 1, peer: 0, region: 0, detail0: 0, detail1: 1 },
      });
    };
    const runtime = runtimeOf(native, 1);
    const ep = RankEndpoint.create(runtime, defineConfig({ ...config, layout: "contiguous" }), {
      output: "exact",
      timeoutMs: 250,
    });
    ep.dispatchRecv();
    const e = await ep.dispatchRecvRows().catch((x) => x);
    expect(e).toBeInstanceOf(TimeoutError);
    expect(e).toMatchObject({ rank: 1, peer: 0, stage: "dispatch recv", timeoutMs: 250 });
    expect(() => ep.dispatchRecvInto({ x: 0x10n })).toThrow(PhaseError);
  });

  it("exact output is refused for the masked layout; rows and into on a worst-case endpoint name the mode", async () => {
    const { native } = fake();
    const runtime = runtimeOf(native);
    expect(() => RankEndpoint.create(runtime, config, { output: "exact" })).toThrow(UnsupportedError);
    const ep = RankEndpoint.create(runtime, defineConfig({ ...config, layout: "contiguous" }));
    expect(ep.output).toBe("worst-case");
    await expect(ep.dispatchRecvRows()).rejects.toThrow(/output is worst-case/);
    expect(() => ep.dispatchRecvInto({ x: 0x10n })).toThrow(UnsupportedError);
  });

  it("setBlocks refuses a budget below 1 before the native side sees it", () => {
    const { native, calls } = fake();
    const ep = RankEndpoint.wrap(config, native, {} as NativeAddon, 0);
    expect(() => ep.setBlocks(0)).toThrow(RangeError);
    ep.setBlocks(24);
    expect(calls).toEqual(["setBlocks 24"]);
  });
});

describe("readDispatchResult", () => {
  /** An addon whose copyToHost fills each region with its index (region order) and counts as given. */
  function regions(layoutNames: RegionName[]) {
    const reads: string[] = [];
    const region = (name: RegionName) => {
      reads.push(name);
      return { ptr: BigInt(layoutNames.indexOf(name) + 1), bytes: 64 };
    };
    const addon = {
      copyToHost: (dst: ArrayBufferView) => new Uint8Array(dst.buffer).fill(1),
    } as unknown as NativeAddon;
    return { reads, region, addon };
  }

  it("contiguous: reads recvX / recvMeta, offsets are the padded prefix sums of the counts", () => {
    const c = defineConfig({
      ranks: 2,
      experts: 6,
      topK: 2,
      hidden: 8,
      maxTokensPerRank: 4,
      layout: "contiguous",
      expertAlignment: 4,
    });
    const { reads, region, addon } = regions(["recvX", "recvMeta"]);
    // counts [L = 3, R = 2]: expert 0 gets 1 + 2, expert 1 none, expert 2 gets 4 + 1.
    const r = readDispatchResult(c, Int32Array.from([1, 2, 0, 0, 4, 1]), region, addon);
    expect(reads).toEqual(["recvX", "recvMeta"]);
    expect(Array.from(r.expertCounts)).toEqual([3, 0, 5]);
    expect(Array.from(r.expertOffsets)).toEqual([0, 4, 4]);
    expect(r.scales).toBeNull();
    expect(computeLayout(c).rows).toBeGreaterThanOrEqual(4 + 8);
  });

  it("exact output: x and scales of the layout's rows, the step's rows copied first and zeros after", () => {
    const c = defineConfig({
      ranks: 2,
      experts: 4,
      topK: 2,
      hidden: 128,
      maxTokensPerRank: 3,
      layout: "contiguous",
      dispatchDtype: "fp8-e4m3",
    });
    const rows = computeLayout(c).rows;
    const region = (name: RegionName) =>
      name === "recvX"
        ? { ptr: 1n, bytes: 2 * 128 }
        : name === "recvScales"
          ? { ptr: 2n, bytes: 2 * 4 }
          : { ptr: 3n, bytes: rows * 16 };
    const addon = {
      copyToHost: (dst: ArrayBufferView) =>
        new Uint8Array(dst.buffer, dst.byteOffset, dst.byteLength).fill(1),
    } as unknown as NativeAddon;
    const r = readDispatchResult(c, Int32Array.from([1, 0, 1, 0]), region, addon, rows);
    expect(r.x.length).toBe(rows * 128);
    expect(r.x.slice(0, 256).every((v) => v === 1)).toBe(true);
    expect(r.x.slice(256).every((v) => v === 0)).toBe(true);
    expect(r.scales?.length).toBe(rows);
    expect(Array.from(r.scales?.slice(2) ?? [1])).toEqual(new Array(rows - 2).fill(0));
  });

  it("masked: reads recvX / recvScales / recvMeta, offsets e * R * M", () => {
    const c = defineConfig({
      ranks: 2,
      experts: 4,
      topK: 2,
      hidden: 128,
      maxTokensPerRank: 3,
      dispatchDtype: "fp8-e4m3",
    });
    const { reads, region, addon } = regions(["recvX", "recvScales", "recvMeta"]);
    const r = readDispatchResult(c, Int32Array.from([1, 2, 3, 0]), region, addon);
    expect(reads).toEqual(["recvX", "recvScales", "recvMeta"]);
    expect(Array.from(r.expertOffsets)).toEqual([0, 6]);
    expect(Array.from(r.expertCounts)).toEqual([3, 3]);
    expect(r.x).toBeInstanceOf(Uint8Array);
  });
});
