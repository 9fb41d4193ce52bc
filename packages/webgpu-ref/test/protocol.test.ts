import { defineConfig, type EpConfig, encodeSignal, ProtocolError, type RegionName } from "@switchyard/core";
import { afterEach, describe, expect, it } from "vitest";
import { expectSameHeaps } from "./helpers.js";
import { Pair } from "./pair.js";

const base = { ranks: 2, experts: 4, topK: 2, hidden: 5, maxTokensPerRank: 3 } as const;
const MASKED = defineConfig(base);
const CONTIGUOUS = defineConfig({ ...base, layout: "contiguous", expertAlignment: 2 });

let pair: Pair | null = null;
afterEach(async () => {
  await pair?.close();
  pair = null;
});

/** dispatchSignal (masked [L, R]) or countSignal (contiguous [R, L]) index of (local expert e, source s). */
function countIndex(config: EpConfig, e: number, s: number): { region: RegionName; index: number } {
  const L = config.experts / config.ranks;
  return config.layout === "masked"
    ? { region: "dispatchSignal", index: e * config.ranks + s }
    : { region: "countSignal", index: s * L + e };
}

describe.each([
  ["masked", MASKED],
  ["contiguous", CONTIGUOUS],
])("dispatch signals corrupted before dispatchRecv (%s)", (_, config) => {
  const recv = (p: Pair, r: number) => (s: "gpu" | "ref") => (s === "gpu" ? p.gpu : p.ref).dispatchRecv(r);

  it("a lost signal is reported as missing, naming the peer; restored, the step is exact", async () => {
    pair = await Pair.create(config);
    await pair.send(0);
    const { region, index } = countIndex(config, 1, 1);
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
    const { region, index } = countIndex(config, 0, 0);
    await pair.corrupt(1, region, index, encodeSignal(1, config.maxTokensPerRank + 1));
    await pair.expectSameError(recv(pair, 1), /signal from rank 0 counts 4 rows, more than the 3 possible/);
  });

  it("a stale signal from the previous step is reported with both epochs", async () => {
    pair = await Pair.create(config);
    await pair.step(0);
    const { region, index } = countIndex(config, 1, 0);
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
    const { region, index } = countIndex(config, 0, 1);
    await pair.corrupt(0, region, index, 1 << 21, false);
    await expect(pair.gpu.dispatchRecv(0)).rejects.toThrow(/signal from rank 1 is malformed/);
  });
});

describe("contiguous count exchange", () => {
  it("per-expert counts that do not add up to the announced total are reported", async () => {
    pair = await Pair.create(CONTIGUOUS);
    await pair.send(0);
    const { region, index } = countIndex(CONTIGUOUS, 1, 0);
    const old = await pair.gpu.readWord(1, region, index);
    await pair.corrupt(1, region, index, old + 1); // one more row, still a plausible count
    await pair.expectSameError(
      (s) => (s === "gpu" ? pair!.gpu : pair!.ref).dispatchRecv(1),
      /rank 0 announced \d+ rows but its per-expert counts add up to \d+/,
    );
  });

  it("a staged-rows total larger than a source can send is reported", async () => {
    pair = await Pair.create(CONTIGUOUS);
    await pair.send(0);
    await pair.corrupt(0, "dispatchSignal", 1, encodeSignal(1, pair.gpu.layout.rowsPerSource + 1));
    await pair.expectSameError(
      (s) => (s === "gpu" ? pair!.gpu : pair!.ref).dispatchRecv(0),
      /signal from rank 1 counts \d+ rows, more than the \d+ possible/,
    );
  });
});

describe.each([
  ["masked", MASKED],
  ["contiguous", CONTIGUOUS],
])("combine signals corrupted before combineRecv (%s)", (_, config) => {
  const crecv = (p: Pair, r: number) => (s: "gpu" | "ref") => (s === "gpu" ? p.gpu : p.ref).combineRecv(r);
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
    await pair.corrupt(0, "combineSignal", 1, encodeSignal(1, 3 * 2 + 1));
    await pair.expectSameError(crecv(pair, 0), /signal from rank 1 counts 7 rows, more than the 6 possible/);
  });

  it("a plausible count that does not match the used slots", async () => {
    pair = await Pair.create(config);
    await upToCombine(pair, 0);
    const old = await pair.gpu.readWord(0, "combineSignal", 1);
    await pair.corrupt(0, "combineSignal", 1, old + 1);
    await pair.expectSameError(
      crecv(pair, 0),
      /expert rank 1 announced \d+ rows, this rank's tokens route \d+ slots to it/,
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
  it("makes combineSend refuse before anything is written; restored, the step is exact", async () => {
    pair = await Pair.create(config);
    await pair.step(0);
    await pair.send(1);
    await pair.recv(0);
    const { region, index } = countIndex(config, 0, 1);
    // A late or duplicated delivery rewrites the word with another (still plausible) count.
    const old = await pair.corrupt(0, region, index, encodeSignal(2, 0), false);
    const before = await pair.gpu.readHeap(1);
    const error = await pair.gpu.combineSend(0, pair.out).then(
      () => null,
      (e) => e,
    );
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toMatch(
      /rank 0, combine send, region \w+Signal: signal from rank 1 changed after dispatch recv/,
    );
    const after = await pair.gpu.readHeap(1);
    expect(new Uint8Array(after.symmetric)).toEqual(new Uint8Array(before.symmetric));
    await pair.corrupt(0, region, index, old, false);
    await pair.csend(0);
    await pair.recv(1);
    await pair.csend(1);
    for (const r of [0, 1]) await pair.crecv(r);
    await expectSameHeaps(pair.gpu, pair.ref, "after the repaired step");
  });
});
