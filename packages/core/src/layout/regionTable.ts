import type { RegionDescription } from "./regionDescription.js";

/**
 * Every region of protocol version 2 (docs/protocol.md), in placement order: each heap (symmetric,
 * local) takes its regions one after another in this order, each at a multiple of REGION_ALIGN.
 * `index` is the region's position in REGION_NAMES (the parameter block's order).
 *
 * This table is the one place a region is described. computeLayout reads it; the C layout reads
 * the table generated from it (src/native/layout/layout_regions.gen.h of @switchyard/cuda); the
 * C, CUDA and Python names come from REGION_NAMES. Adding a region is one entry here, then
 * `npx turbo run build --filter=@switchyard/core && npm run contract -w @switchyard/cuda`.
 *
 * Shapes are in LAYOUT_SYMBOLS. `combineX` depends on `combineWeights`: `expert` holds one weighted
 * partial per (expert rank, token), [R, M, H]; `home` one unweighted expert output row per
 * (token, slot), [M, K, H] (the expert rank hosting slot k of token t writes row t * K + k).
 */
export const REGION_TABLE = [
  {
    name: "countSignal",
    index: 4,
    dtype: "u32",
    symmetric: true,
    forms: [
      {
        when: { layout: "masked" },
        shape: ["R", "L"],
        axes: ["srcRank", "localExpert"],
        doc: "signal from source rank: its row count for each local expert",
      },
      {
        when: { layout: "contiguous" },
        shape: ["R", "E"],
        axes: ["srcRank", "expert"],
        doc: "signal from source rank: its row count for every expert of the world (counts first)",
      },
    ],
  },
  {
    name: "dispatchSignal",
    index: 0,
    dtype: "u32",
    symmetric: true,
    forms: [
      {
        shape: ["R"],
        axes: ["srcRank"],
        doc: "signal from source rank after its rows and route records (count = records)",
      },
    ],
  },
  {
    name: "dispatchX",
    index: 1,
    dtype: "dispatchDtype",
    symmetric: true,
    usedWhen: { layout: "masked" },
    forms: [
      {
        shape: ["R", "M", "H"],
        axes: ["srcRank", "record", "hidden"],
        doc: "payload of route record j from srcRank (one row per token and rank)",
      },
    ],
  },
  {
    name: "dispatchScales",
    index: 2,
    dtype: "f32",
    symmetric: true,
    usedWhen: { layout: "masked" },
    emptyWhen: { dispatchDtype: "bf16" },
    forms: [
      {
        shape: ["R", "M", "S"],
        axes: ["srcRank", "record", "block"],
        doc: "fp32 scale per 128-element block of each record's row (fp8 only)",
      },
    ],
  },
  {
    name: "dispatchRoutes",
    index: 3,
    dtype: "i32",
    symmetric: true,
    forms: [
      {
        shape: ["R", "M", "W"],
        axes: ["srcRank", "record", "word"],
        doc: "route record j from srcRank: (srcToken, n, n x (localExpert, slot, index, weight bits))",
      },
    ],
  },
  {
    name: "combineSignal",
    index: 5,
    dtype: "u32",
    symmetric: true,
    forms: [
      {
        when: { combineWeights: "home" },
        shape: ["R"],
        axes: ["expertRank"],
        doc: "signal from each expert rank after its rows for this rank (count = tokens whose rows it wrote)",
      },
      {
        shape: ["R"],
        axes: ["expertRank"],
        doc: "signal from each expert rank after its partials for this rank (count = partials)",
      },
    ],
  },
  {
    name: "combineX",
    index: 6,
    dtype: "bf16",
    symmetric: true,
    forms: [
      {
        when: { combineWeights: "home" },
        shape: ["M", "K", "H"],
        axes: ["token", "slot", "hidden"],
        doc: "expert output of slot k of this rank's (DP group's) token t, unweighted, bf16; written by the rank hosting the slot's expert",
      },
      {
        shape: ["R", "M", "H"],
        axes: ["expertRank", "token", "hidden"],
        doc: "partial of expert rank r for this rank's (DP group's) token t: its slots' weighted sum, bf16",
      },
    ],
  },
  {
    name: "recvX",
    index: 7,
    dtype: "dispatchDtype",
    symmetric: { layout: "contiguous" },
    forms: [
      {
        when: { layout: "masked" },
        shape: ["L", "R*M", "H"],
        axes: ["localExpert", "row", "hidden"],
        doc: "output: expert e's rows packed at the front of its block, by (srcRank, srcToken)",
      },
      {
        when: { layout: "contiguous" },
        shape: ["N", "H"],
        axes: ["row", "hidden"],
        doc: "output: expert blocks in order, rows by (srcRank, srcToken), each block padded to expertAlignment; senders write each token once, at its first entry's row",
      },
    ],
  },
  {
    name: "recvScales",
    index: 8,
    dtype: "f32",
    symmetric: { layout: "contiguous" },
    emptyWhen: { dispatchDtype: "bf16" },
    forms: [
      {
        when: { layout: "masked" },
        shape: ["L", "R*M", "S"],
        axes: ["localExpert", "row", "block"],
        doc: "output: block scales of each row (fp8 only)",
      },
      {
        when: { layout: "contiguous" },
        shape: ["N", "S"],
        axes: ["row", "block"],
        doc: "output: block scales of each row (fp8 only)",
      },
    ],
  },
  {
    name: "recvMeta",
    index: 9,
    dtype: "i32",
    symmetric: false,
    forms: [
      {
        when: { layout: "masked" },
        shape: ["L", "R*M", "META_WORDS"],
        axes: ["localExpert", "row", "word"],
        doc: "output: (srcRank, srcToken, topkSlot, localExpert) of each row",
      },
      {
        when: { layout: "contiguous" },
        shape: ["N", "META_WORDS"],
        axes: ["row", "word"],
        doc: "output: (srcRank, srcToken, topkSlot, localExpert) of each row; srcRank -1 on padding rows",
      },
    ],
  },
] as const satisfies readonly RegionDescription[];
