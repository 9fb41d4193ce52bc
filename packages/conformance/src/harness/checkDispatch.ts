import {
  alignUp,
  type DispatchResult,
  deliveredRows,
  type EpConfig,
  type Layout,
  localExperts,
  type ReferenceRow,
  scalesPerRow,
} from "@switchyard/core";
import { type Problems, typeName } from "./problems.js";

const hex = (v: number, digits: number) => `0x${v.toString(16).padStart(digits, "0")}`;

function f32Bits(a: Float32Array): Uint32Array {
  return new Uint32Array(a.buffer, a.byteOffset, a.length);
}

/**
 * Checks the result's types and lengths against the layout. Returns false (after adding the
 * problems) when they are too wrong to look further.
 */
export function checkResultShape(
  config: EpConfig,
  layout: Layout,
  rank: number,
  result: DispatchResult,
  problems: Problems,
): boolean {
  const before = problems.count;
  const at = `rank ${rank} dispatch result`;
  const L = localExperts(config);
  const rows = layout.rows;
  const H = config.hidden;
  const S = scalesPerRow(config, config.dispatchDtype);
  const wantX = config.dispatchDtype === "bf16" ? Uint16Array : Uint8Array;
  if (!(result.x instanceof wantX)) problems.add(`${at}: x is ${typeName(result.x)}, expected ${wantX.name}`);
  else if (result.x.length !== rows * H)
    problems.add(`${at}: x has ${result.x.length} elements, expected rows*hidden = ${rows}*${H}`);
  if (S === 0 && result.scales !== null) problems.add(`${at}: scales given for bf16 dispatch, expected null`);
  if (S > 0 && !(result.scales instanceof Float32Array && result.scales.length === rows * S))
    problems.add(`${at}: scales is ${typeName(result.scales)}, expected Float32Array [${rows}, ${S}]`);
  if (!(result.meta instanceof Int32Array && result.meta.length === rows * 4))
    problems.add(`${at}: meta is ${typeName(result.meta)}, expected Int32Array [${rows}, 4]`);
  for (const [name, n] of [
    ["expertOffsets", L],
    ["expertCounts", L],
    ["sourceCounts", L * config.ranks],
  ] as const) {
    const v = result[name];
    if (!(v instanceof Int32Array && v.length === n))
      problems.add(
        `${at}: ${name} is ${typeName(v)}${v ? ` of length ${v.length}` : ""}, expected Int32Array [${n}]`,
      );
  }
  if (problems.count > before) return false;
  if (config.layout === "contiguous") {
    for (let e = 0; e < L; e++) {
      const first = result.expertOffsets[e];
      const end = first + result.expertCounts[e];
      if (first < 0 || result.expertCounts[e] < 0 || end > rows) {
        problems.add(`${at}: local expert ${e}: rows [${first}, ${end}) fall outside the ${rows} rows`);
      }
    }
  }
  return problems.count === before;
}

/** Rows each (local expert, source rank) should receive: counts[e][s]. */
export function expectedCounts(config: EpConfig, expected: ReferenceRow[][]): number[][] {
  return expected.map((rows) => {
    const c = new Array<number>(config.ranks).fill(0);
    for (const r of rows) c[r.srcRank]++;
    return c;
  });
}

/**
 * Checks that each local expert got exactly the routed (srcRank, srcToken, slot) rows, with the
 * right counts and provenance words, and (with `payload`) bit-exact rows and scales.
 * Row order is not checked here (see `checkRowOrder`); rows are compared as sets.
 */
export function checkDispatchRows(
  config: EpConfig,
  layout: Layout,
  rank: number,
  result: DispatchResult,
  expected: ReferenceRow[][],
  problems: Problems,
  options: { payload: boolean },
): void {
  if (!checkResultShape(config, layout, rank, result, problems)) return;
  const R = config.ranks;
  const L = localExperts(config);
  const H = config.hidden;
  const S = scalesPerRow(config, config.dispatchDtype);
  const counts = expectedCounts(config, expected);
  const name = (e: number) => `rank ${rank} local expert ${e} (expert ${rank * L + e})`;
  for (let e = 0; e < L; e++) {
    let total = 0;
    for (let s = 0; s < R; s++) {
      total += counts[e][s];
      const got = result.sourceCounts[e * R + s];
      if (got !== counts[e][s])
        problems.add(`${name(e)}: sourceCounts from rank ${s} = ${got}, expected ${counts[e][s]}`);
    }
    if (result.expertCounts[e] !== total)
      problems.add(`${name(e)}: expertCounts = ${result.expertCounts[e]}, expected ${total}`);
  }
  const wanted = expected.map(
    (rows) => new Map(rows.map((r) => [`${r.srcRank},${r.srcToken},${r.slot}`, r])),
  );
  const seen = expected.map(() => new Set<string>());
  const scales = result.scales === null ? null : f32Bits(result.scales);
  for (const { row, localExpert: e } of deliveredRows(config, result)) {
    const [src, token, slot, local] = result.meta.subarray(row * 4, row * 4 + 4);
    const what = `${name(e)} row ${row} (srcRank ${src}, srcToken ${token}, slot ${slot})`;
    if (local !== e) problems.add(`${what}: meta localExpert = ${local}, expected ${e}`);
    const key = `${src},${token},${slot}`;
    const ref = wanted[e].get(key);
    if (ref === undefined) {
      problems.add(
        `${what}: not routed to this expert (no such token/slot, or its slot is -1 or names another expert)`,
      );
      continue;
    }
    if (seen[e].has(key)) {
      problems.add(`${what}: delivered twice`);
      continue;
    }
    seen[e].add(key);
    if (!options.payload) continue;
    for (let h = 0; h < H; h++) {
      if (result.x[row * H + h] !== ref.x[h]) {
        const d = config.dispatchDtype === "bf16" ? 4 : 2;
        problems.add(
          `${what}: payload element ${h} = ${hex(result.x[row * H + h], d)}, expected ${hex(ref.x[h], d)}`,
        );
        break;
      }
    }
    if (scales !== null && ref.scales !== null) {
      const want = f32Bits(ref.scales);
      for (let b = 0; b < S; b++) {
        if (scales[row * S + b] !== want[b]) {
          problems.add(
            `${what}: scale of block ${b} = ${result.scales![row * S + b]}, expected ${ref.scales[b]}`,
          );
          break;
        }
      }
    }
  }
  expected.forEach((rows, e) => {
    for (const r of rows) {
      const key = `${r.srcRank},${r.srcToken},${r.slot}`;
      if (!seen[e].has(key))
        problems.add(
          `${name(e)}: missing row (srcRank ${r.srcRank}, srcToken ${r.srcToken}, slot ${r.slot})`,
        );
    }
  });
}

/**
 * Checks the layout's documented structure: masked expertOffsets[e] = e*R*M (rows packed at the
 * front of the block, so expertCounts[e] <= R*M); contiguous offsets
 * are the prefix sums of the counts each padded to expertAlignment, and padding rows carry
 * meta srcRank -1.
 */
export function checkLayoutStructure(
  config: EpConfig,
  layout: Layout,
  rank: number,
  result: DispatchResult,
  expected: ReferenceRow[][],
  problems: Problems,
): void {
  if (!checkResultShape(config, layout, rank, result, problems)) return;
  const L = localExperts(config);
  const counts = expectedCounts(config, expected).map((c) => c.reduce((a, b) => a + b, 0));
  let next = 0;
  for (let e = 0; e < L; e++) {
    const want = config.layout === "masked" ? e * config.ranks * config.maxTokensPerRank : next;
    if (result.expertOffsets[e] !== want)
      problems.add(
        `rank ${rank} local expert ${e}: expertOffsets = ${result.expertOffsets[e]}, expected ${want}`,
      );
    if (config.layout === "masked") {
      if (result.expertCounts[e] > config.ranks * config.maxTokensPerRank)
        problems.add(
          `rank ${rank} local expert ${e}: expertCounts = ${result.expertCounts[e]} overflows its block of R*M = ${config.ranks * config.maxTokensPerRank} rows`,
        );
      continue;
    }
    const padded = alignUp(counts[e], config.expertAlignment);
    for (let row = want + counts[e]; row < want + padded && row < layout.rows; row++) {
      if (result.meta[row * 4] !== -1)
        problems.add(
          `rank ${rank} local expert ${e} padding row ${row}: meta srcRank = ${result.meta[row * 4]}, expected -1`,
        );
    }
    next += padded;
  }
  if (next > layout.rows)
    problems.add(`rank ${rank}: padded blocks need ${next} rows, the layout has ${layout.rows}`);
}

/**
 * Checks row order: ascending (srcRank, srcToken) within each expert's block (masked: the rows
 * packed at the front of the block; contiguous: the block before its padding).
 */
export function checkRowOrder(
  config: EpConfig,
  layout: Layout,
  rank: number,
  result: DispatchResult,
  problems: Problems,
): void {
  if (!checkResultShape(config, layout, rank, result, problems)) return;
  let prev: { e: number; src: number; token: number } | null = null;
  for (const { row, localExpert: e } of deliveredRows(config, result)) {
    const src = result.meta[row * 4];
    const token = result.meta[row * 4 + 1];
    if (prev && prev.e === e && !(src > prev.src || (src === prev.src && token > prev.token))) {
      problems.add(
        `rank ${rank} local expert ${e} row ${row}: (srcRank ${src}, srcToken ${token}) comes after ` +
          `(srcRank ${prev.src}, srcToken ${prev.token}); expected ascending (srcRank, srcToken)`,
      );
    }
    prev = { e, src, token };
  }
}
