import { combineWeightsOf } from "../combineWeights.js";
import { type EpConfig, localExperts, scalesPerRow } from "../config.js";
import { placeRegions, REGION_NAMES, type Region, type RegionName, type RegionSpec } from "./region.js";

/** Metadata words per delivered row: (source rank, source token, top-k slot, local expert). */
export const META_WORDS = 4;

/**
 * A rank's buffers for one config (protocol version 2, docs/protocol.md): every region with its
 * offset, size and shape. All ranks have the same layout, so a sender computes any peer's
 * addresses alone.
 *
 * Symbols used in the docs: R ranks, L local experts, E = R * L experts, M maxTokensPerRank,
 * H hidden, K topK, S = H/128 scales per row (0 without fp8), J = min(K, L) the most slots one
 * token has on one rank, W = 2 + 4 * J words of a route record, N = R * M * J + L * (A - 1)
 * delivered rows at most (contiguous, A = expertAlignment).
 *
 * `combineX` depends on `combineWeights`: `expert` holds one weighted partial per (expert rank,
 * token), [R, M, H]; `home` one unweighted expert output row per (token, slot), [M, K, H] (the
 * expert rank hosting slot k of token t writes row t * K + k).
 */
export interface Layout {
  readonly config: Readonly<EpConfig>;
  /** Regions by name; unused ones have 0 bytes. */
  readonly regions: Readonly<Record<RegionName, Region>>;
  /** Row slots of the dispatch output (`recvX` rows): masked L * R * M, contiguous N. */
  readonly rows: number;
  /** M * J: the most output rows one source fills on one rank in a step. */
  readonly rowsPerSource: number;
  /** J = min(K, L): the most route entries (slots) one token has on one rank. */
  readonly slotsPerRank: number;
  /** W = 2 + 4 * J: i32 words of one route record (srcToken, n, then J entries of 4 words). */
  readonly routeWords: number;
  /** Bytes of the symmetric heap every rank allocates (peers write into it). */
  readonly symmetricBytes: number;
  /** Bytes of local (non-symmetric) buffers a rank allocates. */
  readonly localBytes: number;
  /** symmetricBytes + localBytes: what a rank needs in all. */
  readonly bytesPerRank: number;
}

/** i32 words of a route record with J entries: srcToken, n, then (localExpert, slot, index, weight bits) each. */
export function routeWordsOf(slotsPerRank: number): number {
  return 2 + 4 * slotsPerRank;
}

/** Computes the layout for a (validated) config: the one source of truth for every byte offset. */
export function computeLayout(config: Readonly<EpConfig>): Layout {
  const R = config.ranks;
  const L = localExperts(config);
  const E = config.experts;
  const M = config.maxTokensPerRank;
  const H = config.hidden;
  const K = config.topK;
  const S = scalesPerRow(config, config.dispatchDtype);
  const J = Math.min(K, L);
  const W = routeWordsOf(J);
  const N = R * M * J + L * (config.expertAlignment - 1);
  const d = config.dispatchDtype;
  const masked = config.layout === "masked";
  const routes: RegionSpec = {
    name: "dispatchRoutes",
    dtype: "i32",
    shape: [R, M, W],
    axes: ["srcRank", "record", "word"],
    symmetric: true,
    doc: "route record j from srcRank: (srcToken, n, n x (localExpert, slot, index, weight bits))",
  };
  const signals: RegionSpec[] = [
    {
      name: "countSignal",
      dtype: "u32",
      shape: masked ? [R, L] : [R, E],
      axes: masked ? ["srcRank", "localExpert"] : ["srcRank", "expert"],
      symmetric: true,
      doc: masked
        ? "signal from source rank: its row count for each local expert"
        : "signal from source rank: its row count for every expert of the world (counts first)",
    },
    {
      name: "dispatchSignal",
      dtype: "u32",
      shape: [R],
      axes: ["srcRank"],
      symmetric: true,
      doc: "signal from source rank after its rows and route records (count = records)",
    },
  ];
  const home = combineWeightsOf(config) === "home";
  const combine: RegionSpec[] = [
    {
      name: "combineSignal",
      dtype: "u32",
      shape: [R],
      axes: ["expertRank"],
      symmetric: true,
      doc: home
        ? "signal from each expert rank after its rows for this rank (count = tokens whose rows it wrote)"
        : "signal from each expert rank after its partials for this rank (count = partials)",
    },
    {
      name: "combineX",
      dtype: "bf16",
      shape: home ? [M, K, H] : [R, M, H],
      axes: home ? ["token", "slot", "hidden"] : ["expertRank", "token", "hidden"],
      symmetric: true,
      doc: home
        ? "expert output of slot k of this rank's (DP group's) token t, unweighted, bf16; written by the rank hosting the slot's expert"
        : "partial of expert rank r for this rank's (DP group's) token t: its slots' weighted sum, bf16",
    },
  ];
  const outShape = masked ? [L, R * M] : [N];
  const outAxes = masked ? ["localExpert", "row"] : ["row"];
  const specs: RegionSpec[] = [
    ...signals,
    ...(masked
      ? ([
          {
            name: "dispatchX",
            dtype: d,
            shape: [R, M, H],
            axes: ["srcRank", "record", "hidden"],
            symmetric: true,
            doc: "payload of route record j from srcRank (one row per token and rank)",
          },
          {
            name: "dispatchScales",
            dtype: "f32",
            shape: S ? [R, M, S] : [0],
            axes: ["srcRank", "record", "block"],
            symmetric: true,
            doc: "fp32 scale per 128-element block of each record's row (fp8 only)",
          },
        ] satisfies RegionSpec[])
      : []),
    routes,
    ...combine,
    {
      name: "recvX",
      dtype: d,
      shape: [...outShape, H],
      axes: [...outAxes, "hidden"],
      symmetric: !masked,
      doc: masked
        ? "output: expert e's rows packed at the front of its block, by (srcRank, srcToken)"
        : "output: expert blocks in order, rows by (srcRank, srcToken), each block padded to expertAlignment; senders write each token once, at its first entry's row",
    },
    {
      name: "recvScales",
      dtype: "f32",
      shape: S ? [...outShape, S] : [0],
      axes: [...outAxes, "block"],
      symmetric: !masked,
      doc: "output: block scales of each row (fp8 only)",
    },
    {
      name: "recvMeta",
      dtype: "i32",
      shape: [...outShape, META_WORDS],
      axes: [...outAxes, "word"],
      symmetric: false,
      doc: masked
        ? "output: (srcRank, srcToken, topkSlot, localExpert) of each row"
        : "output: (srcRank, srcToken, topkSlot, localExpert) of each row; srcRank -1 on padding rows",
    },
  ];
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
    rows: masked ? L * R * M : N,
    rowsPerSource: M * J,
    slotsPerRank: J,
    routeWords: W,
    symmetricBytes: placed.symmetricBytes,
    localBytes: placed.localBytes,
    bytesPerRank: placed.symmetricBytes + placed.localBytes,
  });
}
