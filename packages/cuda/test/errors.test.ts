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
import { BAD_INPUT_CODE, mapNativeError, NativeError } from "../src/errors.js";

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

  it("a phase called out of order becomes PhaseError; a destroyed handle DestroyedError", () => {
    const p = mapNativeError(
      native(
        "SY_ERR_PHASE",
        "x.cc:1: sy_dispatch_recv: called out of order: the endpoint's next call is sy_dispatch_send",
      ),
      3,
      500,
    );
    expect(p).toBeInstanceOf(PhaseError);
    expect(p).toMatchObject({ rank: 3, phase: "dispatchRecv" });
    const d = mapNativeError(
      native(
        "SY_ERR_STATE",
        "handles.cc:52: sy_dispatch_send: ep (0x1) is not a live sy_endpoint: it was destroyed, or was never created",
      ),
      0,
      500,
    );
    expect(d).toBeInstanceOf(DestroyedError);
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
    expect(mapNativeError(native("SY_ERR_STATE", "Endpoint was destroyed"), 2, 1)).toBeInstanceOf(
      DestroyedError,
    );
    const cuda = mapNativeError(native("SY_ERR_CUDA", "endpoint.cc:120: cudaMalloc failed"), 2, 1);
    expect(cuda).toBeInstanceOf(NativeError);
    expect(cuda.message).toBe("rank 2: SY_ERR_CUDA: endpoint.cc:120: cudaMalloc failed");
  });
});
