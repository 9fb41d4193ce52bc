import {
  combineWeightsOf,
  type DispatchInput,
  type EpConfig,
  ProtocolError,
  type RankInput,
  type RegionName,
} from "@switchyard/core";
import { expect } from "vitest";
import type { WebGpuSession } from "../src/session.js";
import {
  createPair,
  expectSameDispatch,
  randomExpertOut,
  randomInputs,
  referenceHeaps,
  rng,
} from "./helpers.js";

/**
 * A WebGPU session and the reference, driven in lockstep, with signal words corrupted in both.
 * With combineWeights home a rank dispatches its input without weights and passes them to
 * combineRecv (`weights`).
 */
export class Pair {
  readonly inputs: RankInput[][];
  readonly out: Uint16Array;
  /** The step of the latest send, whose weights combineRecv takes at home. */
  private current = 0;

  private constructor(
    readonly config: EpConfig,
    readonly gpu: WebGpuSession,
    readonly ref: Awaited<ReturnType<typeof createPair>>["ref"],
    seed = config.layout === "masked" ? 1 : 2,
  ) {
    const rand = rng(seed);
    this.inputs = [0, 1, 2].map(() =>
      randomInputs(config, rand, { tokens: config.maxTokensPerRank, unused: 0 }),
    );
    this.out = randomExpertOut(gpu.layout.rows, config.hidden, rand);
  }

  static async create(config: EpConfig, seed?: number): Promise<Pair> {
    const { gpu, ref } = await createPair(config);
    return new Pair(config, gpu, ref, seed);
  }

  private get all(): number[] {
    return Array.from({ length: this.config.ranks }, (_, r) => r);
  }

  private get home(): boolean {
    return combineWeightsOf(this.config) === "home";
  }

  /** What rank r dispatches in `step`: its input, without the weights at home. */
  dispatchOf(step: number, r: number): DispatchInput {
    if (!this.home) return this.inputs[step][r];
    const { topkWeights: _, ...input } = this.inputs[step][r];
    return input;
  }

  /** What rank r passes to combineRecv in the latest sent step: its weights at home, else none. */
  weights(r: number): Float32Array | undefined {
    return this.home ? this.inputs[this.current][r].topkWeights : undefined;
  }

  async send(step: number, ranks = this.all) {
    this.current = step;
    for (const r of ranks) {
      await this.gpu.dispatchSend(r, this.dispatchOf(step, r));
      await this.ref.dispatchSend(r, this.dispatchOf(step, r));
    }
  }

  async recv(r: number) {
    expectSameDispatch(
      this.config,
      await this.gpu.dispatchRecv(r),
      await this.ref.dispatchRecv(r),
      `recv ${r}`,
    );
  }

  async csend(r: number) {
    await this.gpu.combineSend(r, this.out);
    await this.ref.combineSend(r, this.out);
  }

  async crecv(r: number) {
    expect(Array.from(await this.gpu.combineRecv(r, this.weights(r)))).toEqual(
      Array.from(await this.ref.combineRecv(r, this.weights(r))),
    );
  }

  async step(step: number) {
    await this.send(step);
    for (const r of this.all) {
      await this.recv(r);
      await this.csend(r);
    }
    for (const r of this.all) await this.crecv(r);
  }

  /** Writes `word` into both sessions' memory; returns the word that was there. */
  async corrupt(
    rank: number,
    region: RegionName,
    index: number,
    word: number,
    refToo = true,
  ): Promise<number> {
    const old = await this.gpu.readWord(rank, region, index);
    await this.gpu.corruptWord(rank, region, index, word);
    if (refToo) {
      expect(old).toBe(referenceHeaps(this.ref)[rank].u32(region)[index]);
      referenceHeaps(this.ref)[rank].u32(region)[index] = word;
    }
    return old;
  }

  /** Both sessions refuse `call` with the same ProtocolError (rank, stage, region and words). */
  async expectSameError(call: (s: "gpu" | "ref") => Promise<unknown>, want: RegExp): Promise<ProtocolError> {
    const got = await call("gpu").then(
      () => null,
      (e) => e,
    );
    const expected = await call("ref").then(
      () => null,
      (e) => e,
    );
    expect(got).toBeInstanceOf(ProtocolError);
    expect(expected).toBeInstanceOf(ProtocolError);
    expect(got.message).toBe(expected.message);
    expect(got.message).toMatch(want);
    return got;
  }

  async close() {
    await this.gpu.destroy();
    await this.ref.destroy();
  }
}
