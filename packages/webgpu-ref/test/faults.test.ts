import {
  decodeSignal,
  defineConfig,
  type EpConfig,
  encodeSignal,
  epochOfStep,
  ProtocolError,
  type RegionName,
} from "@switchyard/core";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { expectSameDispatch, expectSameHeaps } from "./helpers.js";
import { Pair } from "./pair.js";

/**
 * Signal faults between stages, injected into the WebGPU session and core's reference alike, at
 * random words of random small worlds. What the receiver's signal word holds under each fault:
 * - lost: this step's signal never lands, the word keeps what it held (0 on a fresh heap, reported
 *   missing; the previous step's word later, reported stale);
 * - duplicated: delivered twice by a transport that adds signals, the word doubles (its epoch field
 *   no longer matches, reported stale); delivered twice by one that sets them (Switchyard's own
 *   transports), the word is unchanged and the step must be exact: counted apart, as harmless;
 * - late: not there when the receiver looks (reported missing or stale), lands afterwards: the
 *   retry must be exact. A dispatch signal that lands, or changes, after dispatchRecv read it is
 *   refused by combineSend, which reads the signals and route records again (as the reference does);
 * - stale: a word carrying another step's epoch with a plausible count (reported stale).
 * Every detection must be a ProtocolError naming the receiving rank, the stage, the region and
 * the peer, with the same message from both; after the repair the step must match the reference
 * bit for bit, heaps included: a fault never becomes wrong output.
 */
type Kind = "lost" | "duplicated" | "late" | "late after recv" | "stale" | "duplicated (set)";
const KINDS: readonly Kind[] = ["lost", "duplicated", "late", "late after recv", "stale", "duplicated (set)"];
type Stage = "dispatch" | "combine";

const tally = {
  injected: Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<Kind, number>,
  detected: Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<Kind, number>,
  exactAfter: 0,
};

afterAll(() => {
  const kinds = KINDS.filter((k) => k !== "duplicated (set)");
  const injected = kinds.reduce((n, k) => n + tally.injected[k], 0);
  const detected = kinds.reduce((n, k) => n + tally.detected[k], 0);
  const per = kinds.map((k) => `${k} ${tally.detected[k]}/${tally.injected[k]}`).join(", ");
  console.log(
    `signal faults (webgpu): ${injected} injected, ${detected} detected (${per}); ` +
      `${tally.injected["duplicated (set)"]} harmless identical duplicates; ` +
      `${tally.exactAfter} steps exact after the repair`,
  );
});

function worldArb(): fc.Arbitrary<EpConfig> {
  return fc
    .record({
      ranks: fc.integer({ min: 2, max: 3 }),
      L: fc.integer({ min: 1, max: 3 }),
      topK: fc.integer({ min: 1, max: 3 }),
      hidden: fc.integer({ min: 1, max: 12 }),
      M: fc.integer({ min: 1, max: 4 }),
      contiguous: fc.boolean(),
      home: fc.boolean(),
    })
    .map((c) =>
      defineConfig({
        ranks: c.ranks,
        experts: c.ranks * c.L,
        topK: Math.min(c.topK, c.ranks * c.L),
        hidden: c.hidden,
        maxTokensPerRank: c.M,
        layout: c.contiguous ? "contiguous" : "masked",
        // combineWeights home is masked-only
        ...(!c.contiguous && c.home ? { combineWeights: "home" as const } : {}),
      }),
    );
}

const caseArb = worldArb().chain((config) =>
  fc.record({
    config: fc.constant(config),
    seed: fc.nat(),
    warmUp: fc.boolean(),
    stage: fc.constantFrom<Stage>("dispatch", "combine"),
    kind: fc.constantFrom(...KINDS),
    rank: fc.nat({ max: config.ranks - 1 }),
    peer: fc.nat({ max: config.ranks - 1 }),
    expert: fc.nat({ max: config.experts / config.ranks - 1 }),
    total: fc.boolean(),
  }),
);

type CaseValue = typeof caseArb extends fc.Arbitrary<infer V> ? V : never;

/** The word (region, index) on the receiving rank that `peer`'s signal for this stage lands in. */
function target(c: CaseValue): { region: RegionName; index: number } {
  const { config, stage, rank, peer, expert } = c;
  const L = config.experts / config.ranks;
  if (stage === "combine") return { region: "combineSignal", index: peer };
  if (c.total) return { region: "dispatchSignal", index: peer };
  const index = config.layout === "masked" ? peer * L + expert : peer * config.experts + rank * L + expert;
  return { region: "countSignal", index };
}

async function runCase(c: CaseValue): Promise<void> {
  const { config, stage, rank, peer } = c;
  const kind: Kind = c.kind === "late after recv" && stage === "combine" ? "late" : c.kind;
  const pair = await Pair.create(config, c.seed);
  const R = config.ranks;
  const all = Array.from({ length: R }, (_, r) => r);
  try {
    const step = c.warmUp ? 1 : 0;
    if (c.warmUp) await pair.step(0);
    const { region, index } = target(c);
    const epoch = epochOfStep(step);
    const word = () => pair.gpu.readWord(rank, region, index);
    const receive = (s: "gpu" | "ref") =>
      stage === "dispatch"
        ? (s === "gpu" ? pair.gpu : pair.ref).dispatchRecv(rank)
        : (s === "gpu" ? pair.gpu : pair.ref).combineRecv(rank, pair.weights(rank));
    const previous = stage === "dispatch" ? await word() : 0;
    await pair.send(step);
    let prevCombine = 0;
    if (stage === "combine") {
      for (const r of all) await pair.recv(r);
      prevCombine = await word();
      for (const r of all) await pair.csend(r);
    }
    const now = await word();
    const before = stage === "dispatch" ? previous : prevCombine;
    expect(decodeSignal(now)?.epoch).toBe(epoch);
    tally.injected[kind]++;

    if (kind === "late after recv") {
      // dispatchRecv read the right word; then a late (or duplicated) delivery changes it.
      await pair.recv(rank);
      const changed = encodeSignal(epochOfStep(step + 1), decodeSignal(now)!.count);
      await pair.corrupt(rank, region, index, changed);
      const heapsBefore = await Promise.all(all.map((r) => pair.gpu.readHeap(r)));
      const e = await pair.expectSameError(
        (s) => (s === "gpu" ? pair.gpu : pair.ref).combineSend(rank, pair.out),
        /signal from rank \d+ is stale/,
      );
      expect([e.rank, e.stage, e.region, e.peer]).toEqual([rank, "combine send", region, peer]);
      for (const r of all) {
        const h = await pair.gpu.readHeap(r);
        expect(new Uint8Array(h.symmetric)).toEqual(new Uint8Array(heapsBefore[r].symmetric));
      }
      tally.detected[kind]++;
      await pair.corrupt(rank, region, index, now);
      for (const r of all) {
        if (r !== rank) await pair.recv(r);
        await pair.csend(r);
      }
    } else {
      const injected =
        kind === "lost" || kind === "late"
          ? before
          : kind === "duplicated"
            ? (now + now) >>> 0
            : kind === "stale"
              ? encodeSignal(epochOfStep(step + 2047 - 1), decodeSignal(now)!.count)
              : now;
      await pair.corrupt(rank, region, index, injected);
      if (kind !== "duplicated (set)") {
        const e = await pair.expectSameError(receive, /signal from rank \d+ is (missing|stale)/);
        expect([e.rank, e.stage, e.region, e.peer]).toEqual([rank, `${stage} recv`, region, peer]);
        tally.detected[kind]++;
        await pair.corrupt(rank, region, index, now); // the signal lands (late), or is repaired
      }
      if (stage === "dispatch") {
        for (const r of all) await pair.recv(r);
        for (const r of all) await pair.csend(r);
      }
    }
    for (const r of all) await pair.crecv(r);
    await expectSameHeaps(pair.gpu, pair.ref, `after the ${kind} ${region}[${index}] fault`);
    tally.exactAfter++;
  } finally {
    await pair.close();
  }
}

describe("signal faults between stages are detected, never turned into wrong output", () => {
  it("lost, duplicated, late and stale dispatch and combine signals, random words of random worlds", async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, (c) => runCase(c)),
      { numRuns: 200 },
    );
    for (const k of KINDS) expect(tally.injected[k], k).toBeGreaterThan(0);
  });
});

/**
 * A route record word changed in flight (token, entry count, local expert, slot or index; weights
 * are left alone), on the receiver before dispatchRecv, in both sessions: both must refuse with
 * the same ProtocolError (region dispatchRoutes or the record's counts, naming the source), or
 * deliver and combine the same bytes. Restored, the step is exact.
 */
const recordTally = { injected: 0, refused: 0, accepted: 0 };

afterAll(() => {
  console.log(
    `route record faults (webgpu): ${recordTally.injected} injected, ${recordTally.refused} refused by both ` +
      `with the same error, ${recordTally.accepted} accepted by both with the same bytes`,
  );
});

const recordArb = worldArb().chain((config) =>
  fc.record({
    config: fc.constant(config),
    seed: fc.nat(),
    rank: fc.nat({ max: config.ranks - 1 }),
    src: fc.nat({ max: config.ranks - 1 }),
    pick: fc.nat(),
    value: fc.integer({ min: -1, max: config.maxTokensPerRank + 1 }),
  }),
);

type RecordCase = typeof recordArb extends fc.Arbitrary<infer V> ? V : never;

async function runRecordCase(c: RecordCase): Promise<void> {
  const { config, rank, src } = c;
  const pair = await Pair.create(config, c.seed);
  const all = Array.from({ length: config.ranks }, (_, r) => r);
  try {
    await pair.send(0);
    const records = decodeSignal(await pair.gpu.readWord(rank, "dispatchSignal", src))!.count;
    if (records === 0) return;
    const W = pair.gpu.layout.routeWords;
    const j = c.pick % records;
    const at = (src * config.maxTokensPerRank + j) * W;
    const n = await pair.gpu.readWord(rank, "dispatchRoutes", at + 1);
    const words = Array.from({ length: 2 + 4 * n }, (_, w) => w).filter((w) => w < 2 || (w - 2) % 4 !== 3);
    const w = words[c.pick % words.length];
    const old = await pair.corrupt(rank, "dispatchRoutes", at + w, c.value >>> 0);
    recordTally.injected++;
    const gpu = await pair.gpu.dispatchRecv(rank).then(
      (r) => ({ ok: r, err: null }),
      (e) => ({ ok: null, err: e }),
    );
    const ref = await pair.ref.dispatchRecv(rank).then(
      (r) => ({ ok: r, err: null }),
      (e) => ({ ok: null, err: e }),
    );
    expect(gpu.err === null, `gpu ${gpu.err?.message} / ref ${ref.err?.message}`).toBe(ref.err === null);
    if (gpu.err) {
      expect(gpu.err).toBeInstanceOf(ProtocolError);
      expect(gpu.err.message).toBe(ref.err.message);
      expect([gpu.err.rank, gpu.err.stage, gpu.err.peer]).toEqual([rank, "dispatch recv", src]);
      recordTally.refused++;
      await pair.corrupt(rank, "dispatchRoutes", at + w, old);
      await pair.recv(rank);
    } else {
      expectSameDispatch(config, gpu.ok!, ref.ok!, `corrupted record, recv ${rank}`);
      recordTally.accepted++;
    }
    for (const r of all) if (r !== rank) await pair.recv(r);
    for (const r of all) await pair.csend(r);
    for (const r of all) await pair.crecv(r);
    await expectSameHeaps(pair.gpu, pair.ref, `after the route record fault`);
  } finally {
    await pair.close();
  }
}

describe("route record faults are refused alike, never turned into different output", () => {
  it("a changed token, entry count, local expert, slot or index word of a random record", async () => {
    await fc.assert(
      fc.asyncProperty(recordArb, (c) => runRecordCase(c)),
      { numRuns: 80 },
    );
    expect(recordTally.refused).toBeGreaterThan(0);
  });
});
