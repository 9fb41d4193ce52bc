import { decodeSignal, defineConfig, type EpConfig, encodeSignal, type RegionName } from "@switchyard/core";
import { afterEach, describe, expect, it } from "vitest";
import { expectSameHeaps } from "./helpers.js";
import { Pair } from "./pair.js";

const base = { ranks: 2, experts: 4, topK: 2, hidden: 5, maxTokensPerRank: 3 } as const;
const MASKED = defineConfig(base);
const CONTIGUOUS = defineConfig({ ...base, layout: "contiguous", expertAlignment: 2 });
const HOME = defineConfig({ ...base, combineWeights: "home" });

let pair: Pair | null = null;
afterEach(async () => {
  await pair?.close();
  pair = null;
});

/** countSignal index on `rank` of source s's count for its local expert e (masked [R, L], contiguous [R, E]). */
function countIndex(
  config: EpConfig,
  rank: number,
  e: number,
  s: number,
): { region: RegionName; index: number } {
  const L = config.experts / config.ranks;
  return config.layout === "masked"
    ? { region: "countSignal", index: s * L + e }
    : { region: "countSignal", index: s * config.experts + rank * L + e };
}

/** Word w of route record j from source s in dispatchRoutes [R, M, W]. */
function routeWord(p: Pair, s: number, j: number, w: number): number {
  return (s * p.config.maxTokensPerRank + j) * p.gpu.layout.routeWords + w;
}

describe.each([
  ["masked", MASKED],
  ["contiguous", CONTIGUOUS],
])("dispatch signals corrupted before dispatchRecv (%s)", (_, config) => {
  const recv = (p: Pair, r: number) => (s: "gpu" | "ref") => (s === "gpu" ? p.gpu : p.ref).dispatchRecv(r);

  it("a lost signal is reported as missing, naming the peer; restored, the step is exact", async () => {
    pair = await Pair.create(config);
    await pair.send(0);
    const { region, index } = countIndex(config, 0, 1, 1);
    const old = await pair.corrupt(0, region, index, 0);
    const e = await pair.expectSameError(recv(pair, 0), /signal from rank 1 is missing/);
    expect([e.rank, e.stage, e.region]).toEqual([0, "dispatch recv", region]);
    await pair.corrupt(0, region, index, old);
    await pair.recv(0);
    await pair.recv(1);
    for (const r of [0, 1]) await pair.csend(r);
    for (const r of [0, 1]) await pair.crecv(r);
    await expectSameHeaps(pair.gpu, pair.ref, "after the repaired step");
  });

  it("a duplicated signal counting more rows than the region holds is reported", async () => {
    pair = await Pair.create(config);
    await pair.send(0);
    const { region, index } = countIndex(config, 1, 0, 0);
    await pair.corrupt(1, region, index, encodeSignal(1, config.maxTokensPerRank + 1));
    await pair.expectSameError(recv(pair, 1), /signal from rank 0 counts 4 rows, more than the 3 possible/);
  });

  it("a stale signal from the previous step is reported with both epochs", async () => {
    pair = await Pair.create(config);
    await pair.step(0);
    const { region, index } = countIndex(config, 1, 1, 0);
    const previous = await pair.gpu.readWord(1, region, index);
    await pair.send(1);
    await pair.corrupt(1, region, index, previous);
    await pair.expectSameError(recv(pair, 1), /signal from rank 0 is stale: epoch 1, this step is epoch 2/);
  });

  it("a signal that never came (peer not sent yet) is missing; once it is sent the step is exact", async () => {
    pair = await Pair.create(config);
    await pair.send(0, [0]);
    await pair.expectSameError(recv(pair, 0), /signal from rank 1 is missing/);
    await pair.send(0, [1]);
    await pair.recv(0);
    await pair.recv(1);
  });

  it("a malformed word (zero count field) is refused", async () => {
    pair = await Pair.create(config);
    await pair.send(0);
    const { region, index } = countIndex(config, 0, 0, 1);
    await pair.corrupt(0, region, index, 1 << 21, false);
    await expect(pair.gpu.dispatchRecv(0)).rejects.toThrow(/signal from rank 1 is malformed/);
  });
});

describe.each([
  ["masked", MASKED],
  ["contiguous", CONTIGUOUS],
])("counts and route records that disagree (%s)", (_, config) => {
  const recv = (p: Pair, r: number) => (s: "gpu" | "ref") => (s === "gpu" ? p.gpu : p.ref).dispatchRecv(r);

  it("a count one larger than the records name is reported", async () => {
    pair = await Pair.create(config);
    await pair.send(0);
    const { region, index } = countIndex(config, 1, 1, 0);
    const old = await pair.gpu.readWord(1, region, index);
    await pair.corrupt(1, region, index, old + 1); // one more row, still a plausible count
    await pair.expectSameError(
      recv(pair, 1),
      /rank 0's records name local expert 1 \d+ times, its count announced \d+/,
    );
  });

  it("more records than a source has tokens is reported", async () => {
    pair = await Pair.create(config);
    await pair.send(0);
    const max = config.maxTokensPerRank;
    await pair.corrupt(0, "dispatchSignal", 1, encodeSignal(1, max + 1));
    await pair.expectSameError(recv(pair, 0), /signal from rank 1 counts 4 rows, more than the 3 possible/);
  });

  it("bad words of a record are reported, naming the record, the entry and the peer", async () => {
    const cases: [number, number, RegExp][] = [
      [0, 7, /record 0 from rank 1: token 7 outside \[0, 3\)/],
      [1, 0, /record 0 from rank 1: 0 entries, expected 1\.\.2/],
      [2, 5, /record 0 from rank 1: entry 0: local expert 5 outside \[0, 2\)/],
      [3, -1, /record 0 from rank 1: entry 0: slot -1 outside \[0, 2\)/],
      [4, 9, /record 0 from rank 1: entry 0: index 9 for local expert \d, which was announced \d rows/],
    ];
    for (const [w, value, want] of cases) {
      pair = await Pair.create(config);
      await pair.send(0);
      await pair.corrupt(0, "dispatchRoutes", routeWord(pair, 1, 0, w), value >>> 0);
      const e = await pair.expectSameError(recv(pair, 0), want);
      expect([e.rank, e.stage, e.region, e.peer]).toEqual([0, "dispatch recv", "dispatchRoutes", 1]);
      await pair.close();
      pair = null;
    }
  });

  it("two records naming one row are reported", async () => {
    pair = await Pair.create(config);
    await pair.send(0);
    // record 1 from rank 1 to rank 0 takes record 0's (expert, index)
    const words = [0, 1, 2, 3, 4, 5].map((w) => routeWord(pair!, 1, 0, w));
    const first = await Promise.all(words.map((at) => pair!.gpu.readWord(0, "dispatchRoutes", at)));
    await pair.corrupt(0, "dispatchRoutes", routeWord(pair, 1, 1, 1), 1);
    await pair.corrupt(0, "dispatchRoutes", routeWord(pair, 1, 1, 2), first[2]);
    await pair.corrupt(0, "dispatchRoutes", routeWord(pair, 1, 1, 4), first[4]);
    await pair.expectSameError(
      recv(pair, 0),
      /record 1 from rank 1 names local expert \d's index \d a second time/,
    );
  });
});

describe.each([
  ["masked", MASKED],
  ["contiguous", CONTIGUOUS],
  ["masked, combineWeights home", HOME],
])("combine signals corrupted before combineRecv (%s)", (_, config) => {
  const crecv = (p: Pair, r: number) => (s: "gpu" | "ref") =>
    (s === "gpu" ? p.gpu : p.ref).combineRecv(r, p.weights(r));
  const upToCombine = async (p: Pair, step: number) => {
    await p.send(step);
    for (const r of [0, 1]) {
      await p.recv(r);
      await p.csend(r);
    }
  };

  it("lost: missing, naming the expert rank; restored, y is exact", async () => {
    pair = await Pair.create(config);
    await upToCombine(pair, 0);
    const old = await pair.corrupt(1, "combineSignal", 0, 0);
    const e = await pair.expectSameError(crecv(pair, 1), /signal from rank 0 is missing/);
    expect([e.rank, e.stage, e.region]).toEqual([1, "combine recv", "combineSignal"]);
    await pair.corrupt(1, "combineSignal", 0, old);
    for (const r of [0, 1]) await pair.crecv(r);
    await expectSameHeaps(pair.gpu, pair.ref, "after the repaired step");
  });

  it("duplicated: more rows than the region holds", async () => {
    pair = await Pair.create(config);
    await upToCombine(pair, 0);
    await pair.corrupt(0, "combineSignal", 1, encodeSignal(1, 3 + 1));
    await pair.expectSameError(crecv(pair, 0), /signal from rank 1 counts 4 rows, more than the 3 possible/);
  });

  it("a plausible count that does not match the used slots", async () => {
    pair = await Pair.create(config);
    await upToCombine(pair, 0);
    const old = await pair.gpu.readWord(0, "combineSignal", 1);
    const n = decodeSignal(old)!.count; // at most M partials: one more, or one fewer at M
    await pair.corrupt(0, "combineSignal", 1, encodeSignal(1, n < config.maxTokensPerRank ? n + 1 : n - 1));
    await pair.expectSameError(
      crecv(pair, 0),
      /expert rank 1 announced \d+ (partials|tokens), \d+ of this rank's tokens route to it/,
    );
  });

  it("stale: the previous step's word", async () => {
    pair = await Pair.create(config);
    await pair.step(0);
    const previous = await pair.gpu.readWord(0, "combineSignal", 1);
    await upToCombine(pair, 1);
    await pair.corrupt(0, "combineSignal", 1, previous);
    await pair.expectSameError(crecv(pair, 0), /signal from rank 1 is stale: epoch 1, this step is epoch 2/);
  });
});

describe.each([
  ["masked", MASKED],
  ["contiguous", CONTIGUOUS],
])("a late dispatch signal after dispatchRecv (%s)", (_, config) => {
  it("makes combineSend, which reads them again, refuse before anything is written; restored, the step is exact", async () => {
    pair = await Pair.create(config);
    await pair.step(0);
    await pair.send(1);
    await pair.recv(0);
    const { region, index } = countIndex(config, 0, 0, 1);
    // A late or duplicated delivery rewrites the word with another step's epoch.
    const old = await pair.corrupt(0, region, index, encodeSignal(3, 0));
    const before = await pair.gpu.readHeap(1);
    const e = await pair.expectSameError(
      (s) => (s === "gpu" ? pair!.gpu : pair!.ref).combineSend(0, pair!.out),
      /signal from rank 1 is stale: epoch 3, this step is epoch 2/,
    );
    expect([e.rank, e.stage, e.region, e.peer]).toEqual([0, "combine send", region, 1]);
    const after = await pair.gpu.readHeap(1);
    expect(new Uint8Array(after.symmetric)).toEqual(new Uint8Array(before.symmetric));
    await pair.corrupt(0, region, index, old);
    await pair.csend(0);
    await pair.recv(1);
    await pair.csend(1);
    for (const r of [0, 1]) await pair.crecv(r);
    await expectSameHeaps(pair.gpu, pair.ref, "after the repaired step");
  });
});
