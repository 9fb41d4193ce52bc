import type { EpConfig } from "../config.js";
import {
  placeRegions,
  REGION_ALIGN,
  REGION_NAMES,
  type Region,
  type RegionName,
  type RegionSpec,
} from "./region.js";
import { conditionHolds, extentFactors, type RegionDescription, regionFormOf } from "./regionDescription.js";
import { REGION_TABLE } from "./regionTable.js";
import { type LayoutSymbol, layoutSymbols } from "./symbols.js";

/**
 * A rank's buffers for one config (protocol version 2, docs/protocol.md): every region with its
 * offset, size and shape. All ranks have the same layout, so a sender computes any peer's
 * addresses alone.
 *
 * Every region is described once, in REGION_TABLE (regionTable.ts); shapes and the docs below are
 * written in LAYOUT_SYMBOLS (symbols.ts): R ranks, L local experts, E experts, M maxTokensPerRank,
 * H hidden, K topK, S scales per row, J = min(K, L), W = 2 + 4 * J, N = R * M * J + L * (A - 1).
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

/** The region `region` is for `config`: dtype, shape in elements, heap, doc. */
function regionSpecOf(
  region: RegionDescription,
  config: Readonly<EpConfig>,
  symbols: Readonly<Record<LayoutSymbol, number>>,
): RegionSpec {
  const form = regionFormOf(region, config);
  const empty = conditionHolds(region.emptyWhen ?? false, config);
  return {
    name: region.name as RegionName,
    dtype: region.dtype === "dispatchDtype" ? config.dispatchDtype : region.dtype,
    shape: empty ? [0] : form.shape.map((e) => extentFactors(e).reduce((n, s) => n * symbols[s], 1)),
    axes: [...form.axes],
    symmetric: conditionHolds(region.symmetric, config),
    doc: form.doc,
  };
}

/**
 * Computes the layout for a (validated) config from REGION_TABLE: the one source of truth for
 * every byte offset.
 */
export function computeLayout(config: Readonly<EpConfig>): Layout {
  const symbols = layoutSymbols(config);
  const { R, L, M, J, W, N } = symbols;
  const specs = REGION_TABLE.filter((r: RegionDescription) => conditionHolds(r.usedWhen ?? true, config)).map(
    (r) => regionSpecOf(r, config, symbols),
  );
  const placed = placeRegions(specs);
  const byName = {} as Record<RegionName, Region>;
  for (const r of placed.regions) byName[r.name] = r;
  for (const name of REGION_NAMES) {
    byName[name] ??= Object.freeze({
      name,
      offset: 0,
      bytes: 0,
      align: REGION_ALIGN,
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
    rows: config.layout === "masked" ? L * R * M : N,
    rowsPerSource: M * J,
    slotsPerRank: J,
    routeWords: W,
    symmetricBytes: placed.symmetricBytes,
    localBytes: placed.localBytes,
    bytesPerRank: placed.symmetricBytes + placed.localBytes,
  });
}
