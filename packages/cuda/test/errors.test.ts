import {
  DestroyedError,
  InputError,
  PhaseError,
  ProtocolError,
  TimeoutError,
  UnsupportedError,
} from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { mapNativeError, NativeError } from "../src/errors.js";

const native = (code: string, message: string, info?: object) =>
  Object.assign(new Error(message), { code, info });

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
