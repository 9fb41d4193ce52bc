import { defineConfig, encodeBf16, InputError, type RankInput } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { WebGpuSession } from "../src/session.js";

const config = defineConfig({ ranks: 2, experts: 4, topK: 2, hidden: 2, maxTokensPerRank: 3 });
const empty: RankInput = {
  x: new Uint16Array(0),
  topkIdx: new Int32Array(0),
  topkWeights: new Float32Array(0),
};

function input(topkIdx: Int32Array): RankInput {
  return { x: encodeBf16([1, 2, 3, 4]), topkIdx, topkWeights: Float32Array.from([1, 1, 1, 1]) };
}

/** An Int32Array whose slice() hands out other routing than its elements. */
class LyingSlice extends Int32Array {
  override slice(): Int32Array<ArrayBuffer> {
    return Int32Array.from([0, 1, 0, 1]) as Int32Array<ArrayBuffer>;
  }
}

async function sourceCountsOnRank1(mine: RankInput): Promise<number[]> {
  const s = await WebGpuSession.create(config);
  try {
    await s.dispatchSend(0, mine);
    await s.dispatchSend(1, empty);
    return Array.from((await s.dispatchRecv(1)).sourceCounts);
  } finally {
    await s.destroy();
  }
}

describe("the webgpu session sends the input it validated", () => {
  it("a subclass whose slice() disagrees with its elements: the elements are sent", async () => {
    expect(await sourceCountsOnRank1(input(LyingSlice.from([2, 3, 3, -1]) as Int32Array))).toEqual([
      1, 0, 2, 0,
    ]);
  });

  it("a Proxy of a typed array is refused with an InputError", async () => {
    const s = await WebGpuSession.create(config);
    const proxy = new Proxy(Int32Array.from([2, 3, 0, 1]), {});
    await expect(s.dispatchSend(0, input(proxy))).rejects.toThrow(InputError);
    await s.destroy();
  });
});
