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
 * N = R * C + L * (expertAlignment - 1) delivered rows at most (contiguous).
 */
export interface Layout {
  readonly config: Readonly<EpConfig>;
  /** Regions by name; unused ones have 0 bytes. */
  readonly regions: Readonly<Record<RegionName, Region>>;
  /** Row slots of the dispatch output (`dispatchX` rows for masked, `recvX` rows for contiguous). */
  readonly rows: number;
  /** C: the most rows one source sends one rank in a step. */
  readonly rowsPerSource: number;
  /** Bytes of the symmetric heap every rank allocates (peers write into it). */
  readonly symmetricBytes: number;
  /** Bytes of local (non-symmetric) buffers a rank allocates. */
  readonly localBytes: number;
  /** symmetricBytes + localBytes: what a rank needs in all. */
  readonly bytesPerRank: number;
}

/** Computes the layout for a (validated) config: the one source of truth for every byte offset. */
export function computeLayout(config: Readonly<EpConfig>): Layout {
  const R = config.ranks;
  const L = localExperts(config);
  const M = config.maxTokensPerRank;
  const H = config.hidden;
  const K = config.topK;
  const S = scalesPerRow(config, config.dispatchDtype);
  const C = M * Math.min(K, L);
  const N = R * C + L * (config.expertAlignment - 1);
  const d = config.dispatchDtype;
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
      {
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
        shape: [R, C, H],
        axes: ["srcRank", "row", "hidden"],
        symmetric: true,
        doc: "staging: rows from srcRank, ordered by local expert then source token",
      },
      {
        name: "dispatchScales",
        dtype: "f32",
        shape: S ? [R, C, S] : [0],
        axes: ["srcRank", "row", "block"],
        symmetric: true,
        doc: "staging: fp32 block scales of each staged row (fp8 only)",
      },
      {
        name: "dispatchMeta",
        dtype: "i32",
        shape: [R, C, 4],
        axes: ["srcRank", "row", "word"],
        symmetric: true,
        doc: "staging: (srcRank, srcToken, topkSlot, localExpert) of each staged row",
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
    symmetricBytes: placed.symmetricBytes,
    localBytes: placed.localBytes,
    bytesPerRank: placed.symmetricBytes + placed.localBytes,
  });
}
