import { type EpConfig, localExperts, scalesPerRow } from "../config.js";
import { placeRegions, REGION_NAMES, type Region, type RegionName, type RegionSpec } from "./region.js";

/** Metadata words per delivered row: (source rank, source token, top-k slot, local expert). */
export const META_WORDS = 4;

/**
 * A rank's buffers for one config: every region with its offset, size and shape.
 * All ranks have the same layout, so a sender computes any peer's addresses alone.
 *
 * Symbols used in the docs: R ranks, L local experts, M maxTokensPerRank, H hidden, K topK,
 * S = H/128 scales per row (0 without fp8), C = M * min(K, L) rows one source can send one rank,
 * N = R * C + L * (expertAlignment - 1) delivered rows at most (contiguous),
 * Q = stagingTokens, Cq = Q * min(K, L) rows one source stages on one rank per round.
 */
export interface Layout {
  readonly config: Readonly<EpConfig>;
  /** Regions by name; unused ones have 0 bytes. */
  readonly regions: Readonly<Record<RegionName, Region>>;
  /** Row slots of the dispatch output (`dispatchX` rows for masked, `recvX` rows for contiguous). */
  readonly rows: number;
  /** C: the most rows one source sends one rank in a step. */
  readonly rowsPerSource: number;
  /**
   * Contiguous layout with bounded staging: tokens per round Q (each source stages at most Q of its
   * tokens on a rank at a time, in two alternating buffers); 0 when the staging holds a whole step.
   */
  readonly stagingTokens: number;
  /** Rounds per step: ceil(M / Q) with bounded staging, else 1. */
  readonly stagingRounds: number;
  /** Bytes of the symmetric heap every rank allocates (peers write into it). */
  readonly symmetricBytes: number;
  /** Bytes of local (non-symmetric) buffers a rank allocates. */
  readonly localBytes: number;
  /** symmetricBytes + localBytes: what a rank needs in all. */
  readonly bytesPerRank: number;
}

/** Choices a backend makes that change its buffers but not what a step delivers. */
export interface LayoutOptions {
  /**
   * Contiguous layout only: stage at most this many of a source's tokens on a rank at a time
   * (bounded staging: two buffers of Cq = Q * min(K, L) rows per source, and a step runs in
   * ceil(M / Q) rounds) instead of a whole step's worst case (C rows per source). A value
   * >= maxTokensPerRank, 0 or undefined stages the whole step at once.
   */
  readonly stagingTokens?: number;
}

/** Q as the layout uses it: 0 (whole step) unless the contiguous staging is bounded below M. */
function boundedStagingTokens(config: Readonly<EpConfig>, options: LayoutOptions): number {
  const q = options.stagingTokens ?? 0;
  if (!Number.isInteger(q) || q < 0)
    throw new RangeError(
      `computeLayout: stagingTokens ${String(q)} must be an integer >= 0 (0 stages a whole step)`,
    );
  if (config.layout !== "contiguous" || q >= config.maxTokensPerRank) return 0;
  return q;
}

/** Computes the layout for a (validated) config: the one source of truth for every byte offset. */
export function computeLayout(config: Readonly<EpConfig>, options: LayoutOptions = {}): Layout {
  const R = config.ranks;
  const L = localExperts(config);
  const M = config.maxTokensPerRank;
  const H = config.hidden;
  const K = config.topK;
  const S = scalesPerRow(config, config.dispatchDtype);
  const C = M * Math.min(K, L);
  const N = R * C + L * (config.expertAlignment - 1);
  const d = config.dispatchDtype;
  const Q = boundedStagingTokens(config, options);
  // Staging of the contiguous layout: [R, C] rows for a whole step, or [2, R, Cq] round buffers.
  const stage = Q > 0 ? [2, R, Q * Math.min(K, L)] : [R, C];
  const stageAxes = Q > 0 ? ["buffer", "srcRank", "row"] : ["srcRank", "row"];
  const combine: RegionSpec[] = [
    {
      name: "combineSignal",
      dtype: "u32",
      shape: [R],
      axes: ["expertRank"],
      symmetric: true,
      doc: "signal from each expert rank after all its combine rows for this rank",
    },
    {
      name: "combineX",
      dtype: "bf16",
      shape: [M, K, H],
      axes: ["token", "slot", "hidden"],
      symmetric: true,
      doc: "expert output for top-k slot `slot` of this rank's (DP group's) token `token`",
    },
  ];
  let specs: RegionSpec[];
  let rows: number;
  if (config.layout === "masked") {
    rows = L * R * M;
    specs = [
      {
        name: "dispatchSignal",
        dtype: "u32",
        shape: [L, R],
        axes: ["localExpert", "srcRank"],
        symmetric: true,
        doc: "signal from source rank after its rows for local expert (count = rows)",
      },
      {
        name: "dispatchX",
        dtype: d,
        shape: [L, R, M, H],
        axes: ["localExpert", "srcRank", "slot", "hidden"],
        symmetric: true,
        doc: "row i from srcRank for localExpert at [e][s][i], i < count",
      },
      {
        name: "dispatchScales",
        dtype: "f32",
        shape: S ? [L, R, M, S] : [0],
        axes: ["localExpert", "srcRank", "slot", "block"],
        symmetric: true,
        doc: "fp32 scale per 128-element block of each row (fp8 only)",
      },
      {
        name: "dispatchMeta",
        dtype: "i32",
        shape: [L, R, M, 4],
        axes: ["localExpert", "srcRank", "slot", "word"],
        symmetric: true,
        doc: "(srcRank, srcToken, topkSlot, localExpert) of each row",
      },
      ...combine,
    ];
  } else {
    rows = N;
    specs = [
      {
        name: "countSignal",
        dtype: "u32",
        shape: [R, L],
        axes: ["srcRank", "localExpert"],
        symmetric: true,
        doc: "signal from source rank: its row count for each local expert",
      },
      Q > 0
        ? {
            name: "dispatchSignal",
            dtype: "u32",
            shape: [3, R],
            axes: ["word", "rank"],
            symmetric: true,
            doc: "[b][src]: signal from source rank after its rows of the round in buffer b (count = rows; cleared when consumed); [2][dst]: rounds this rank's rows on destination rank dst were consumed",
          }
        : {
            name: "dispatchSignal",
            dtype: "u32",
            shape: [R],
            axes: ["srcRank"],
            symmetric: true,
            doc: "signal from source rank after all its staged rows (count = rows)",
          },
      {
        name: "dispatchX",
        dtype: d,
        shape: [...stage, H],
        axes: [...stageAxes, "hidden"],
        symmetric: true,
        doc:
          Q > 0
            ? "staging: a round's rows from srcRank in buffer round % 2, in any order"
            : "staging: rows from srcRank, ordered by local expert then source token",
      },
      {
        name: "dispatchScales",
        dtype: "f32",
        shape: S ? [...stage, S] : [0],
        axes: [...stageAxes, "block"],
        symmetric: true,
        doc: "staging: fp32 block scales of each staged row (fp8 only)",
      },
      {
        name: "dispatchMeta",
        dtype: "i32",
        shape: [...stage, 4],
        axes: [...stageAxes, "word"],
        symmetric: true,
        doc:
          Q > 0
            ? "staging: (index among srcRank's rows for localExpert, srcToken, topkSlot, localExpert) of each staged row"
            : "staging: (srcRank, srcToken, topkSlot, localExpert) of each staged row",
      },
      ...combine,
      {
        name: "recvX",
        dtype: d,
        shape: [N, H],
        axes: ["row", "hidden"],
        symmetric: false,
        doc: "output: expert blocks in order, rows by (srcRank, srcToken), each block padded to expertAlignment",
      },
      {
        name: "recvScales",
        dtype: "f32",
        shape: S ? [N, S] : [0],
        axes: ["row", "block"],
        symmetric: false,
        doc: "output: block scales of each row (fp8 only)",
      },
      {
        name: "recvMeta",
        dtype: "i32",
        shape: [N, 4],
        axes: ["row", "word"],
        symmetric: false,
        doc: "output: (srcRank, srcToken, topkSlot, localExpert) of each row; srcRank -1 on padding rows",
      },
    ];
  }
  const placed = placeRegions(specs);
  const byName = {} as Record<RegionName, Region>;
  for (const r of placed.regions) byName[r.name] = r;
  for (const name of REGION_NAMES) {
    byName[name] ??= Object.freeze({
      name,
      offset: 0,
      bytes: 0,
      align: 256,
      dtype: "u32",
      shape: [0],
      axes: [],
      symmetric: false,
      doc: "not used by this layout",
    });
  }
  return Object.freeze({
    config,
    regions: Object.freeze(byName),
    rows,
    rowsPerSource: C,
    stagingTokens: Q,
    stagingRounds: Q > 0 ? Math.ceil(M / Q) : 1,
    symmetricBytes: placed.symmetricBytes,
    localBytes: placed.localBytes,
    bytesPerRank: placed.symmetricBytes + placed.localBytes,
  });
}
