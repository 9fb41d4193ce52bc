import {
  DestroyedError,
  defineConfig,
  InputError,
  PhaseError,
  ProtocolError,
  TimeoutError,
  UnsupportedError,
  validateRankInput,
} from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { ABORTED_CODE, BAD_INPUT_CODE, mapNativeError, NativeError } from "../src/errors.js";

const native = (code: string, message: string, info?: object) =>
  Object.assign(new Error(message), { code, info });

/** Core's InputError message for one rank input with the given topkIdx row (T = 1). */
function coreMessage(topk: number[]): string {
  const config = defineConfig({ ranks: 2, experts: 8, topK: 4, hidden: 128, maxTokensPerRank: 4 });
  try {
    validateRankInput(config, 1, {
      x: new Uint16Array(128),
      topkIdx: Int32Array.from(topk),
      topkWeights: new Float32Array(4).fill(0.25),
    });
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("core accepted the input");
}

describe("a bad expert id found on the device", () => {
  const thrown = (info: object) =>
    native("SY_ERR_INVALID_ARGUMENT", "rank 1, dispatch send: topk_idx[...]", {
      code: BAD_INPUT_CODE,
      ...info,
    });

  it("out of range: InputError worded as core's check of the same entry", () => {
    const e = mapNativeError(
      thrown({ stage: 3, peer: 8, region: 0xffffffff, detail0: 0, detail1: 2 }),
      1,
      500,
      8,
    );
    expect(e).toBeInstanceOf(InputError);
    expect(e).toMatchObject({ rank: 1, what: "topkIdx" });
    expect(e.message.startsWith(coreMessage([0, 1, 8, -1]))).toBe(true);
    // A negative value other than -1 travels as its 32-bit pattern.
    const n = mapNativeError(
      thrown({ stage: 3, peer: 0xfffffffe, region: 0xffffffff, detail0: 0, detail1: 0 }),
      1,
      500,
      8,
    );
    expect(n.message.startsWith(coreMessage([-2, 1, 2, 3]))).toBe(true);
  });

  it("a repeat: InputError naming both slots, as core does", () => {
    const e = mapNativeError(
      thrown({ stage: 3, peer: 5, region: 0xffffffff, detail0: 0, detail1: 3 | (2 << 16) }),
      1,
      500,
      8,
    );
    expect(e).toBeInstanceOf(InputError);
    expect(e.message.startsWith(coreMessage([2, 5, -1, 5]))).toBe(true);
    expect(e.message).toContain("dispatch send");
  });
});

describe("native error mapping", () => {
  it("a combine count that disagrees names the expert rank, worded as core's reference", () => {
    const e = mapNativeError(
      native(
        "SY_ERR_PROTOCOL",
        "rank 0, combine recv, region combineSignal: expert rank 2 announced 5 rows, this rank's tokens route 4 slots to it",
        { code: 4, stage: 2, peer: 2, region: 5, detail0: 5, detail1: 4 },
      ),
      0,
      500,
    );
    expect(e).toBeInstanceOf(ProtocolError);
    expect(e).toMatchObject({ rank: 0, stage: "combine recv", region: "combineSignal", peer: 2 });
    expect(e.message).toBe(
      "rank 0, combine recv, region combineSignal: expert rank 2 announced 5 rows, this rank's tokens route 4 slots to it",
    );
  });

  it("a phase called out of order becomes PhaseError naming the call that was refused", () => {
    const p = mapNativeError(
      native(
        "SY_ERR_PHASE",
        "x.cc:1: sy_dispatch_recv: called out of order: the endpoint's next call is sy_dispatch_send",
      ),
      3,
      500,
      undefined,
      { call: "dispatchRecv" },
    );
    expect(p).toBeInstanceOf(PhaseError);
    expect(p).toMatchObject({ rank: 3, phase: "dispatchRecv" });
    // The phase is the call the caller made, not a name read out of the message.
    const between = mapNativeError(
      native("SY_ERR_PHASE", "sy_endpoint_set_blocks: between steps only"),
      3,
      500,
      undefined,
      { call: "setBlocks" },
    );
    expect(between).toMatchObject({ rank: 3, phase: "setBlocks" });
  });

  it("a state error is DestroyedError when the caller's endpoint was destroyed, NativeError otherwise", () => {
    const thrown = native(
      "SY_ERR_STATE",
      "handles.cc:52: sy_endpoint_check: ep (0x1) is not a live sy_endpoint: it was destroyed, or was never created",
    );
    expect(
      mapNativeError(thrown, 0, 500, undefined, { call: "synchronize", destroyed: true }),
    ).toBeInstanceOf(DestroyedError);
    // The words "destroyed" or "freed" in a message decide nothing.
    const live = mapNativeError(thrown, 0, 500, undefined, { call: "synchronize" });
    expect(live).toBeInstanceOf(NativeError);
    expect(live).toMatchObject({ rank: 0, code: "SY_ERR_STATE" });
    expect(mapNativeError(native("SY_ERR_STATE", "DeviceBuffer was freed"), 0, 500)).toBeInstanceOf(
      NativeError,
    );
  });

  it("a step aborted by destroy (info.code aborted) is DestroyedError, whatever the status or message", () => {
    const info = { code: ABORTED_CODE, stage: 2, peer: 1, region: 5, detail0: 0, detail1: 0 };
    for (const code of ["SY_ERR_PROTOCOL", "SY_ERR_TIMEOUT", "SY_ERR_INTERNAL"]) {
      expect(
        mapNativeError(native(code, "rank 0, combine recv, region combineSignal: ?", info), 0, 500),
      ).toBeInstanceOf(DestroyedError);
    }
    expect(ABORTED_CODE).toBe(5);
  });

  it("a receive timeout becomes TimeoutError(rank, peer, stage, timeoutMs)", () => {
    const e = mapNativeError(
      native("SY_ERR_TIMEOUT", "rank 0, dispatch recv, ...", {
        code: 1,
        stage: 1,
        peer: 3,
        region: 0,
        detail0: 0,
        detail1: 1,
      }),
      0,
      500,
    );
    expect(e).toBeInstanceOf(TimeoutError);
    expect(e).toMatchObject({ rank: 0, peer: 3, stage: "dispatch recv", timeoutMs: 500 });
  });

  it("a broken signal becomes ProtocolError naming stage and region", () => {
    const e = mapNativeError(
      native(
        "SY_ERR_PROTOCOL",
        "rank 1, combine recv, region combineSignal: expert ranks announced 3 rows, this rank's tokens use 4 slots",
        {
          code: 4,
          stage: 2,
          peer: 0xffffffff,
          region: 5,
          detail0: 3,
          detail1: 4,
        },
      ),
      1,
      500,
    );
    expect(e).toBeInstanceOf(ProtocolError);
    expect(e.message).toBe(
      "rank 1, combine recv, region combineSignal: expert ranks announced 3 rows, this rank's tokens use 4 slots",
    );
  });

  it("argument, unsupported, destroyed and CUDA failures map to their classes", () => {
    expect(mapNativeError(native("SY_ERR_INVALID_ARGUMENT", "x is NULL"), 2, 1)).toBeInstanceOf(InputError);
    expect(mapNativeError(native("SY_ERR_UNSUPPORTED", "contiguous"), 2, 1)).toBeInstanceOf(UnsupportedError);
    expect(
      mapNativeError(native("SY_ERR_STATE", "Endpoint was destroyed"), 2, 1, undefined, { destroyed: true }),
    ).toBeInstanceOf(DestroyedError);
    const cuda = mapNativeError(native("SY_ERR_CUDA", "endpoint.cc:120: cudaMalloc failed"), 2, 1);
    expect(cuda).toBeInstanceOf(NativeError);
    expect(cuda.message).toBe("rank 2: SY_ERR_CUDA: endpoint.cc:120: cudaMalloc failed");
  });
});

describe("mapping by code: the message text decides nothing", () => {
  /** Messages that name other calls, stages, regions, ranks and states than the codes say. */
  const misleading = [
    "",
    "rank 9, dispatch recv, region recvX: sy_combine_send: called out of order: the endpoint was destroyed",
    "DeviceBuffer was freed; timeout; protocol; rank 7 never arrived",
  ];
  const info = { code: 2, stage: 2, peer: 3, region: 5, detail0: 9, detail1: 8 };

  it("class and fields come from the status and sy_error_info alone", () => {
    for (const m of misleading) {
      expect(mapNativeError(native("SY_ERR_TIMEOUT", m, { ...info, code: 1 }), 1, 250)).toMatchObject({
        name: "TimeoutError",
        rank: 1,
        peer: 3,
        stage: "combine recv",
        timeoutMs: 250,
      });
      expect(mapNativeError(native("SY_ERR_PROTOCOL", m, info), 1, 250)).toMatchObject({
        name: "ProtocolError",
        rank: 1,
        stage: "combine recv",
        region: "combineSignal",
        peer: 3,
      });
      expect(
        mapNativeError(native("SY_ERR_PHASE", m), 1, 250, undefined, { call: "combineRecv" }),
      ).toMatchObject({
        name: "PhaseError",
        phase: "combineRecv",
      });
      expect(mapNativeError(native("SY_ERR_STATE", m), 1, 250)).toMatchObject({ name: "NativeError" });
      expect(mapNativeError(native("SY_ERR_INVALID_ARGUMENT", m), 1, 250)).toMatchObject({
        name: "InputError",
      });
      expect(mapNativeError(native("SY_ERR_UNSUPPORTED", m), 1, 250)).toMatchObject({
        name: "UnsupportedError",
      });
      expect(mapNativeError(native("SY_ERR_NVSHMEM", m), 1, 250)).toMatchObject({
        name: "NativeError",
        code: "SY_ERR_NVSHMEM",
      });
    }
  });

  it("the stage, region and peer of a ProtocolError follow sy_error_info, not the message", () => {
    const stages = { 1: "dispatch recv", 2: "combine recv", 3: "dispatch send" } as const;
    for (const [stage, label] of Object.entries(stages)) {
      for (const [region, name] of [
        [0, "dispatchSignal"],
        [3, "dispatchRoutes"],
        [5, "combineSignal"],
      ] as const) {
        const e = mapNativeError(
          native("SY_ERR_PROTOCOL", "rank 0, combine recv, region recvMeta: x", {
            ...info,
            stage: Number(stage),
            region,
          }),
          0,
          500,
        );
        expect(e).toMatchObject({ stage: label, region: name, peer: 3 });
      }
    }
    const noPeer = mapNativeError(native("SY_ERR_PROTOCOL", "x", { ...info, peer: 0xffffffff }), 0, 500);
    expect((noPeer as ProtocolError).peer).toBeUndefined();
  });

  it("a ProtocolError's detail is the native message, less the words its fields already give", () => {
    const head = "rank 1, combine recv, region combineSignal: ";
    const same = mapNativeError(
      native("SY_ERR_PROTOCOL", `${head}signal from rank 3 counts 9 rows`, info),
      1,
      500,
    );
    expect(same.message).toBe(`${head}signal from rank 3 counts 9 rows`);
    // A message that starts otherwise is kept whole, after the fields' words.
    const other = mapNativeError(native("SY_ERR_PROTOCOL", "kernel said: count 9 > 8", info), 1, 500);
    expect(other.message).toBe(`${head}kernel said: count 9 > 8`);
  });

  it("an error with the numeric status only maps by core's status codes", () => {
    const byStatus = (status: number, info?: object) =>
      Object.assign(new Error("no code string"), { status, ...(info ? { info } : {}) });
    expect(mapNativeError(byStatus(4, { ...info, code: 1 }), 0, 500)).toBeInstanceOf(TimeoutError);
    expect(mapNativeError(byStatus(5, info), 0, 500)).toBeInstanceOf(ProtocolError);
    expect(mapNativeError(byStatus(10), 0, 500, undefined, { call: "combineSend" })).toBeInstanceOf(
      PhaseError,
    );
    expect(mapNativeError(byStatus(2), 0, 500)).toMatchObject({ name: "NativeError", code: "SY_ERR_CUDA" });
    expect(mapNativeError(byStatus(99), 0, 500)).toMatchObject({
      name: "NativeError",
      code: "SY_ERR_INTERNAL",
    });
  });
});
