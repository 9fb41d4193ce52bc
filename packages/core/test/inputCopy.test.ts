import { describe, expect, it } from "vitest";
import {
  computeLayout,
  DEFAULT_HOST_MEMORY_LIMIT,
  defineConfig,
  encodeBf16,
  InputError,
  type RankInput,
  ReferenceSession,
  ResourceError,
  referenceBackend,
  takeRankInput,
} from "../src/index.js";

// Two ranks, two experts each (rank 0: experts 0, 1; rank 1: experts 2, 3), top-2, hidden 2.
const config = defineConfig({ ranks: 2, experts: 4, topK: 2, hidden: 2, maxTokensPerRank: 3 });

function input(topkIdx: Int32Array): RankInput {
  return { x: encodeBf16([1, 2, 3, 4]), topkIdx, topkWeights: Float32Array.from([1, 1, 1, 1]) };
}

/** The rows rank 1 receives (expert 2 and 3) after rank 0 sends `mine` and rank 1 sends nothing. */
async function rowsOnRank1(mine: RankInput) {
  const s = new ReferenceSession(config);
  await s.dispatchSend(0, mine);
  await s.dispatchSend(1, {
    x: new Uint16Array(0),
    topkIdx: new Int32Array(0),
    topkWeights: new Float32Array(0),
  });
  const d = await s.dispatchRecv(1);
  await s.destroy();
  return Array.from(d.sourceCounts);
}

/** An Int32Array whose slice() hands out other routing than its elements. */
class LyingSlice extends Int32Array {
  override slice(): Int32Array<ArrayBuffer> {
    return Int32Array.from([0, 1, 0, 1]) as Int32Array<ArrayBuffer>;
  }
}

/** An Int32Array whose length getter hides its last token. */
class ShortLength extends Int32Array {
  override get length(): number {
    return 2;
  }
}

describe("takeRankInput: one private copy, validated and used", () => {
  it("a subclass whose slice() disagrees with its elements: the elements (what was validated) are sent", async () => {
    const honest = await rowsOnRank1(input(Int32Array.from([2, 3, 3, -1])));
    const lying = await rowsOnRank1(input(LyingSlice.from([2, 3, 3, -1]) as Int32Array));
    expect(lying).toEqual(honest);
    expect(honest).toEqual([1, 0, 2, 0]);
  });

  it("a subclass whose length lies is validated on its real elements", () => {
    const idx = new ShortLength(4);
    idx.set([2, 2, 0, 1]); // token 0 names expert 2 twice: hidden behind the short length
    expect(() => takeRankInput(config, 0, input(idx))).toThrow(/\[0\] names expert 2 twice/);
  });

  it("refuses a Proxy of a typed array with an InputError, whatever its reads say", async () => {
    let reads = 0;
    const target = Int32Array.from([2, 3, 0, 1]);
    const proxy = new Proxy(target, {
      get: (t, k) =>
        typeof k === "string" && /^\d+$/.test(k) ? (reads++ < 4 ? t[Number(k)] : 7) : Reflect.get(t, k, t),
    });
    const s = new ReferenceSession(config);
    const err = await s.dispatchSend(0, input(proxy)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toMatch(/rank 0: topkIdx: is not a genuine Int32Array \(a Proxy/);
    // The session keeps working.
    await s.dispatchSend(0, input(Int32Array.from([2, 3, 0, 1])));
  });

  it("refuses detached buffers with an InputError, not a TypeError", async () => {
    const detach = <T extends ArrayBufferView>(a: T): T => {
      structuredClone(a.buffer, { transfer: [a.buffer as ArrayBuffer] });
      return a;
    };
    const gone = {
      x: detach(new Uint16Array(2)),
      topkIdx: detach(new Int32Array(2)),
      topkWeights: detach(new Float32Array(2)),
    };
    const s = new ReferenceSession(config);
    const err = await s.dispatchSend(0, gone).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toMatch(/rank 0: x: its ArrayBuffer is detached/);
  });

  it("returns copies: the caller's later writes do not reach them, and validation messages are unchanged", () => {
    const mine = input(Int32Array.from([2, 3, 0, 1]));
    const { input: kept, tokens } = takeRankInput(config, 0, mine);
    mine.topkIdx[0] = 9;
    expect(tokens).toBe(2);
    expect(Array.from(kept.topkIdx)).toEqual([2, 3, 0, 1]);
    expect(() => takeRankInput(config, 0, { ...mine, topkIdx: [2, 3] as unknown as Int32Array })).toThrow(
      /rank 0: topkIdx: expected Int32Array \(int32 expert ids \[T, topK\]\), got Array/,
    );
  });
});

describe("the reference backend's memory bound", () => {
  it("refuses a config that needs terabytes with a ResourceError before allocating", async () => {
    const huge = defineConfig({ ranks: 64, experts: 4096, topK: 8, hidden: 65536, maxTokensPerRank: 4096 });
    expect(computeLayout(huge).bytesPerRank).toBeGreaterThan(2 ** 40);
    const err = await referenceBackend.createSession(huge).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResourceError);
    expect((err as Error).message).toMatch(/backend reference: one rank's symmetric heap needs \d+ bytes/);
  });

  it("refuses heaps over the session limit in all, and allocates those under it", () => {
    const bytes = 2 * computeLayout(config).bytesPerRank;
    expect(() => new ReferenceSession(config, bytes - 1)).toThrow(
      new RegExp(`the heaps of 2 ranks needs ${bytes} bytes, over the limit of ${bytes - 1} bytes`),
    );
    expect(new ReferenceSession(config, bytes).layout.bytesPerRank).toBe(bytes / 2);
    expect(DEFAULT_HOST_MEMORY_LIMIT).toBe(4 * 2 ** 30);
  });
});
