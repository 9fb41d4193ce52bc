import {
  bf16ToNumber,
  type DispatchResult,
  decodeFp8,
  deliveredRows,
  dequantizeRowsToBf16,
  dispatchPayload,
  type EpConfig,
  type ExpertOutputOf,
  FP8_BLOCK,
  localExperts,
  numberToBf16,
  type RankInput,
  scalesPerRow,
} from "@switchyard/core";

/** An expert layer for the test: expert outputs [rows, hidden] (bf16 bits) for one rank's dispatch result. */
export type ExpertFn = (rank: number, result: DispatchResult, rows: number) => Uint16Array;

/** bf16 bits of a quiet NaN: what rows that carry no token hold in the expert output. */
const NAN_BF16 = 0x7fc0;

/** The value element h of a row has for an expert: the bf16 value, or the fp8 value times its block scale. */
function valueReader(
  x: Uint16Array | Uint8Array,
  scales: Float32Array | null,
  hidden: number,
): (row: number, h: number) => number {
  if (scales === null) return (row, h) => bf16ToNumber(x[row * hidden + h]);
  const S = hidden / FP8_BLOCK;
  return (row, h) => decodeFp8(x[row * hidden + h]) * scales[row * S + Math.floor(h / FP8_BLOCK)];
}

function mix(a: number, b: number): number {
  let h = Math.imul(a ^ (b + 0x9e3779b9 + (a << 6) + (a >>> 2)), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * The provenance expert: output element h of the row that (srcRank, srcToken, slot) sent to
 * global expert g is bf16(a(g, slot) * v_h + c(g, srcRank, srcToken, slot, h)), with v_h the
 * payload value, a in [1, 1.5) and c in [-1, 1). Any wrong payload, expert, source, token or slot
 * changes the output, so swapped provenance shows up in the combined result.
 */
export function provenanceOutput(
  g: number,
  src: number,
  token: number,
  slot: number,
  hidden: number,
  value: (h: number) => number,
): Uint16Array {
  const a = 1 + ((g * 5 + slot * 3) % 8) / 16;
  const key = mix(mix(mix(g + 1, src + 1), token + 1), slot + 1);
  const out = new Uint16Array(hidden);
  for (let h = 0; h < hidden; h++) {
    const c = (mix(key, h) & 0xffff) / 32768 - 1;
    out[h] = numberToBf16(Math.fround(a * value(h) + c));
  }
  return out;
}

/** Provenance experts driven by the backend's own result: rows are read from result.meta. */
export function provenanceExperts(config: EpConfig): ExpertFn {
  const H = config.hidden;
  const L = localExperts(config);
  return (rank, result, rows) => {
    const out = new Uint16Array(rows * H).fill(NAN_BF16);
    const read = valueReader(result.x, result.scales, H);
    for (const { row, localExpert } of deliveredRows(config, result)) {
      if (row < 0 || row >= rows) continue;
      const [src, token, slot] = result.meta.subarray(row * 4, row * 4 + 3);
      const g = rank * L + localExpert;
      out.set(
        provenanceOutput(g, src, token, slot, H, (h) => read(row, h)),
        row * H,
      );
    }
    return out;
  };
}

/** The provenance experts' outputs as the specification says they should be, from the inputs alone. */
export function expectedProvenanceOutputs(config: EpConfig, inputs: RankInput[]): ExpertOutputOf {
  const H = config.hidden;
  const payloads = inputs.map((input) => dispatchPayload(config, input));
  const cache = new Map<string, Uint16Array>();
  return (g, src, token, slot) => {
    const key = `${g},${src},${token},${slot}`;
    let out = cache.get(key);
    if (!out) {
      const p = payloads[src];
      const read = valueReader(p.x, p.scales, H);
      out = provenanceOutput(g, src, token, slot, H, (h) => read(token, h));
      cache.set(key, out);
    }
    return out;
  };
}

/** Identity experts: each row's output is its payload as bf16 (fp8 rows dequantised with core's codec). */
export function identityExperts(config: EpConfig): ExpertFn {
  const H = config.hidden;
  const S = scalesPerRow(config, config.dispatchDtype);
  return (_rank, result, rows) => {
    const out = new Uint16Array(rows * H).fill(NAN_BF16);
    for (const { row } of deliveredRows(config, result)) {
      if (row < 0 || row >= rows) continue;
      const x = result.x.subarray(row * H, (row + 1) * H);
      if (result.scales === null) out.set(x, row * H);
      else {
        const s = result.scales.subarray(row * S, (row + 1) * S);
        out.set(dequantizeRowsToBf16(x as Uint8Array, s, H), row * H);
      }
    }
    return out;
  };
}

/**
 * Experts whose output for each delivered row is `outputOf` of the row's provenance, read from the
 * backend's own result (global expert, srcRank, srcToken, slot): the combine properties that choose
 * every product (`exactCombine.ts`). Rows that carry no token hold NaN.
 */
export function outputExperts(config: EpConfig, outputOf: ExpertOutputOf): ExpertFn {
  const H = config.hidden;
  const L = localExperts(config);
  return (rank, result, rows) => {
    const out = new Uint16Array(rows * H).fill(NAN_BF16);
    for (const { row, localExpert } of deliveredRows(config, result)) {
      if (row < 0 || row >= rows) continue;
      const [src, token, slot] = result.meta.subarray(row * 4, row * 4 + 3);
      if (src < 0 || src >= config.ranks || token < 0 || slot < 0 || slot >= config.topK) continue;
      out.set(outputOf(rank * L + localExpert, src, token, slot), row * H);
    }
    return out;
  };
}
