import {
  type DispatchResult,
  type EpConfig,
  encodeBf16,
  localExperts,
  numberToBf16,
  type RankInput,
  referenceCombine,
  referenceDispatch,
  scalesPerRow,
  seededRandom,
} from "@switchyard/core";

/** The seeded generator every check replays from (core's mulberry32). */
export const rng = seededRandom;

/**
 * Inputs of every rank for one step: `tokens` per DP group, distinct experts per token (a slot is
 * -1 with probability `unused`), weights in (0, 1], x with per-block magnitudes spread over many
 * binades (so fp8 block scales differ). Ranks of a DP group get the same tokens.
 */
export function makeInputs(config: EpConfig, tokens: number, seed: number, unused = 0.05): RankInput[] {
  const rand = rng(seed);
  const E = config.experts;
  const K = config.topK;
  const H = config.hidden;
  const groups: RankInput[] = [];
  for (let g = 0; g < config.ranks / config.dpSize; g++) {
    const topkIdx = new Int32Array(tokens * K);
    const topkWeights = new Float32Array(tokens * K);
    for (let t = 0; t < tokens; t++) {
      const chosen = new Set<number>();
      for (let k = 0; k < K; k++) {
        let e = -1;
        if (rand() >= unused) {
          do e = Math.floor(rand() * E);
          while (chosen.has(e));
          chosen.add(e);
        }
        topkIdx[t * K + k] = e;
        topkWeights[t * K + k] = Math.fround(rand() + 1e-3);
      }
    }
    let x: Uint16Array | Uint8Array;
    let scales: Float32Array | undefined;
    if (config.inputDtype === "bf16") {
      const vals = new Float64Array(tokens * H);
      for (let i = 0; i < vals.length; i++) {
        const mag = 2 ** (Math.floor(i / 128) % 17) / 256;
        vals[i] = (rand() - 0.5) * mag;
      }
      x = encodeBf16(vals);
    } else {
      x = new Uint8Array(tokens * H);
      for (let i = 0; i < x.length; i++) {
        const b = Math.floor(rand() * 256);
        x[i] = (b & 0x7f) === 0x7f ? b & 0xfe : b; // no NaN
      }
      const S = scalesPerRow(config, "fp8-e4m3");
      scales = new Float32Array(tokens * S);
      for (let i = 0; i < scales.length; i++) scales[i] = 2 ** (Math.floor(rand() * 20) - 10);
    }
    groups.push({ x, scales, topkIdx, topkWeights });
  }
  return Array.from({ length: config.ranks }, (_, r) => groups[Math.floor(r / config.dpSize)]);
}

/** A deterministic "expert output" row for (expert, srcRank, srcToken, slot): bf16 bits [hidden]. */
export function expertRow(
  hidden: number,
  expert: number,
  src: number,
  token: number,
  slot: number,
): Uint16Array {
  const out = new Uint16Array(hidden);
  let h =
    (Math.imul(expert + 1, 0x9e3779b1) ^
      Math.imul(src + 7, 0x85ebca6b) ^
      Math.imul(token + 3, 0xc2b2ae35)) >>>
    0;
  h = (h ^ Math.imul(slot + 11, 0x27d4eb2f)) >>> 0;
  for (let i = 0; i < hidden; i++) {
    h = (Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    out[i] = numberToBf16(((h & 0xffff) / 32768 - 1) * 3);
  }
  return out;
}

/** Expert outputs [rows, hidden] for the rows a dispatch result delivered to `rank` (others 0). */
export function expertOutputs(config: EpConfig, rank: number, result: DispatchResult): Uint16Array {
  const R = config.ranks;
  const L = localExperts(config);
  const M = config.maxTokensPerRank;
  const H = config.hidden;
  const out = new Uint16Array(L * R * M * H);
  for (let e = 0; e < L; e++) {
    let before = 0; // expert e's rows are packed at the front of its block, by (source, token)
    for (let s = 0; s < R; s++) {
      const first = e * R * M + before;
      before += result.sourceCounts[e * R + s];
      for (let i = 0; i < result.sourceCounts[e * R + s]; i++) {
        const row = first + i;
        const [src, token, slot] = result.meta.subarray(row * 4, row * 4 + 3);
        out.set(expertRow(H, rank * L + e, src, token, slot), row * H);
      }
    }
  }
  return out;
}

/** Element-wise equal, NaN equal to NaN (payload bits compared as numbers). */
export function sameBits(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++)
    if (a[i] !== b[i] && !(Number.isNaN(a[i]) && Number.isNaN(b[i]))) return false;
  return true;
}

/** Differences between a rank's dispatch result and core's reference (empty when bit-exact). */
export function compareDispatch(
  config: EpConfig,
  inputs: RankInput[],
  rank: number,
  got: DispatchResult,
): string[] {
  const ref = referenceDispatch(config, inputs)[rank];
  const R = config.ranks;
  const M = config.maxTokensPerRank;
  const H = config.hidden;
  const S = scalesPerRow(config, config.dispatchDtype);
  const errors: string[] = [];
  for (let e = 0; e < ref.length && errors.length < 8; e++) {
    let before = 0; // masked (protocol version 2): expert e's rows packed at e * R * M, by (source, token)
    for (let s = 0; s < R && errors.length < 8; s++) {
      const rows = ref[e].filter((r) => r.srcRank === s);
      const n = got.sourceCounts[e * R + s];
      const first = e * R * M + before;
      before += rows.length;
      if (n !== rows.length) {
        errors.push(`rank ${rank} expert ${e} source ${s}: ${n} rows, reference ${rows.length}`);
        continue;
      }
      rows.forEach((r, i) => {
        const row = first + i;
        const meta = Array.from(got.meta.subarray(row * 4, row * 4 + 4));
        if (meta.join() !== [r.srcRank, r.srcToken, r.slot, e].join()) {
          errors.push(
            `rank ${rank} expert ${e} source ${s} row ${i}: meta ${meta}, reference ${[r.srcRank, r.srcToken, r.slot, e]}`,
          );
        } else if (!sameBits(got.x.subarray(row * H, (row + 1) * H), r.x)) {
          errors.push(`rank ${rank} expert ${e} source ${s} row ${i} (token ${r.srcToken}): payload differs`);
        } else if (
          S &&
          r.scales &&
          got.scales &&
          !sameBits(got.scales.subarray(row * S, (row + 1) * S), r.scales)
        ) {
          errors.push(`rank ${rank} expert ${e} source ${s} row ${i}: scales differ`);
        }
      });
    }
  }
  return errors;
}

/** Core's combine result for `rank` with expert outputs from `expertRow`. */
export function referenceY(config: EpConfig, inputs: RankInput[], rank: number): Uint16Array {
  const only = inputs.map((input, r) =>
    r === rank
      ? input
      : { ...input, topkIdx: new Int32Array(0), topkWeights: new Float32Array(0), x: input.x.subarray(0, 0) },
  );
  return referenceCombine(config, only, (expert, src, token, slot) =>
    expertRow(config.hidden, expert, src, token, slot),
  )[rank];
}

/** Differences between y and the reference (empty when bit-exact). */
export function compareY(rank: number, got: Uint16Array, want: Uint16Array): string[] {
  if (got.length !== want.length)
    return [`rank ${rank}: y has ${got.length} elements, reference ${want.length}`];
  let bad = 0;
  let first = -1;
  for (let i = 0; i < got.length; i++) {
    if (got[i] !== want[i]) {
      bad++;
      if (first < 0) first = i;
    }
  }
  return bad
    ? [
        `rank ${rank}: ${bad} of ${got.length} y elements differ (first at ${first}: ${got[first]} vs ${want[first]})`,
      ]
    : [];
}
