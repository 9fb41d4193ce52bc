import { scaleFormatOf } from "../codec/scaleFormat.js";
import { combineWeightsOf } from "../combineWeights.js";
import { localExperts, scalesPerRow } from "../config.js";
import { SCALE_FORMAT_CODES } from "../contract/values.js";
import { dtypeBytes } from "../dtype.js";
import type { Layout } from "./layout.js";
import { REGION_NAMES } from "./region.js";

/**
 * The parameter block kernels read instead of deriving offsets themselves: scalar fields first,
 * then (offset, bytes) of every region in `REGION_NAMES` order. WebGPU packs it as u32
 * (refusing values >= 2^32), CUDA as u64. The order here is the contract; kernels index it by
 * the position `PARAM_INDEX[name]`.
 */
export const SCALAR_PARAMS = [
  "ranks",
  "localExperts",
  "maxTokensPerRank",
  "hidden",
  "topK",
  "scalesPerRow",
  "dispatchElemBytes",
  "dpSize",
  "expertAlignment",
  "rowsPerSource",
  "rows",
  "layoutContiguous",
  "quantize",
  "inputFp8",
  "slotsPerRank",
  "routeWords",
  "experts",
  "scaleFormat",
  "combineAtHome",
] as const;

export const PARAM_NAMES: readonly string[] = [
  ...SCALAR_PARAMS,
  ...REGION_NAMES.flatMap((r) => [`${r}.offset`, `${r}.bytes`]),
];

export const PARAM_INDEX: Readonly<Record<string, number>> = Object.freeze(
  Object.fromEntries(PARAM_NAMES.map((n, i) => [n, i])),
);

/** The parameter block of a layout, as plain numbers in `PARAM_NAMES` order. */
export function layoutParams(layout: Layout): number[] {
  const c = layout.config;
  const scalars: Record<(typeof SCALAR_PARAMS)[number], number> = {
    ranks: c.ranks,
    localExperts: localExperts(c),
    maxTokensPerRank: c.maxTokensPerRank,
    hidden: c.hidden,
    topK: c.topK,
    scalesPerRow: scalesPerRow(c, c.dispatchDtype),
    dispatchElemBytes: dtypeBytes(c.dispatchDtype),
    dpSize: c.dpSize,
    expertAlignment: c.expertAlignment,
    rowsPerSource: layout.rowsPerSource,
    rows: layout.rows,
    layoutContiguous: c.layout === "contiguous" ? 1 : 0,
    quantize: c.inputDtype === "bf16" && c.dispatchDtype === "fp8-e4m3" ? 1 : 0,
    inputFp8: c.inputDtype === "fp8-e4m3" ? 1 : 0,
    slotsPerRank: layout.slotsPerRank,
    routeWords: layout.routeWords,
    experts: c.experts,
    scaleFormat: SCALE_FORMAT_CODES[scaleFormatOf(c)],
    combineAtHome: combineWeightsOf(c) === "home" ? 1 : 0,
  };
  return [
    ...SCALAR_PARAMS.map((n) => scalars[n]),
    ...REGION_NAMES.flatMap((r) => [layout.regions[r].offset, layout.regions[r].bytes]),
  ];
}

/** Human-readable memory report: one line per region and the totals. */
export function describeLayout(layout: Layout): string {
  const mb = (b: number) => `${(b / 2 ** 20).toFixed(2)} MiB`;
  const lines = Object.values(layout.regions)
    .filter((r) => r.bytes > 0)
    .map(
      (r) =>
        `${r.symmetric ? "sym  " : "local"} ${r.name.padEnd(15)} ${r.dtype.padEnd(9)} [${r.shape.join(", ")}] ${mb(r.bytes)}`,
    );
  lines.push(
    `symmetric ${mb(layout.symmetricBytes)} + local ${mb(layout.localBytes)} = ${mb(layout.bytesPerRank)} per rank`,
  );
  return lines.join("\n");
}
