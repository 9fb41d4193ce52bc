import {
  combineWeightsOf,
  computeLayout,
  dpGroups,
  type EpConfig,
  type Layout,
  layoutParams,
  localExperts,
  PARAM_NAMES,
  scaleFormatOf,
  scalesPerRow,
  UnsupportedError,
} from "@switchyard/core";
import { planWindows, type Window } from "./windows.js";
import { WordLayout } from "./words.js";

/**
 * Everything a session allocates besides the heaps, derived once from the config. Symbols as in
 * core's layout: R ranks, L local experts, E experts, M maxTokensPerRank, H hidden, K topK,
 * S = H/128 scales per row (fp8), J = min(K, L) slots per rank, W = 2 + 4 J route words,
 * N = layout.rows, G DP groups; P packed rows (masked R M J, the most rows a rank receives;
 * contiguous N); PWd = ceil(H * dispatch bytes / 4) and PWo = ceil(H / 2) words per packed row.
 * All offsets below are in u32 words.
 */
export type WorkBlock =
  /** [16 + L R + 2 L + R]: status [8], scalars [8], sourceCounts [L, R], expertCounts [L], expertOffsets [L], records per source [R]; read back by the host. */
  | "report"
  /** [M, K] i32 and [M, K] f32: this rank's routing, kept from dispatchSend to combineRecv. */
  | "topkIdx"
  | "topkWeights"
  /** dispatch send: rows per global expert [E], records per destination [R], put args [R, 8], the records [R(dst), M, W]. */
  | "sendCounts"
  | "sendRecs"
  | "sendArgs"
  | "recs"
  /** contiguous continuation: count words as read [R, E], first row per global expert [E], counts-arrived flag [4], put args [R, 8]. */
  | "cnt"
  | "first"
  | "flag"
  | "wArgs"
  /** receive: signal words as read [R + R L], per (e, s) row prefix [L, R], first packed row per expert [L]. */
  | "saved"
  | "prefix"
  | "npre"
  /** receive: records as read [R, M, W], packed index of each entry [R, M, J], entry of each packed row [P], times named per expert [L]. */
  | "rrecs"
  | "entN"
  | "deliv"
  | "seen"
  /** indirect args [8] of fan / place: (groups, rows, 1, 0, 1, rows, 1, 0). */
  | "recvArgs"
  /**
   * combine send per DP group: jobs to put [G, jobs] (expert: records, R M; home: record entries,
   * R M J), indirect args [G, 8], records sent [G] (the signal's count), rows sent [G] (partials,
   * or home (token, slot) rows), jobs put [G]; the last job naming each row of combineX (expert
   * [M] per token, home [M, K] per (token, slot)).
   */
  | "cjobs"
  | "cArgs"
  | "sent"
  | "sentRows"
  | "cPuts"
  | "lastJob"
  /** combine recv: signal words of each expert rank as read [R]; tokens that route to each [R]; used slots on each [R]. */
  | "combineCounts"
  | "combineExpected"
  | "combineRows";

export type InboxBlock = "x" | "xScales" | "payload" | "payloadScales" | "payloadRecips";
export type OutboxBlock = "x" | "scales" | "meta" | "acc";

/** Words of the report block before sourceCounts. */
export const REPORT_HEAD = 16;

export interface SessionPlan {
  readonly config: Readonly<EpConfig>;
  readonly layout: Layout;
  readonly R: number;
  readonly L: number;
  readonly M: number;
  readonly H: number;
  readonly K: number;
  readonly S: number;
  readonly E: number;
  readonly J: number;
  readonly W: number;
  readonly G: number;
  /** Packed rows at most: masked R M J (the most rows a rank receives), contiguous N (padding included). */
  readonly packRows: number;
  /** Words per packed dispatch row, per padded bf16 row. */
  readonly PWd: number;
  readonly PWo: number;
  readonly quantize: boolean;
  readonly work: WordLayout<WorkBlock>;
  /**
   * Shared upload buffer: x [M, H] (input dtype), xScales [M, S], payload [M, H] fp8 and
   * payloadScales [M, S] (quantise only), payloadRecips [M, S] fp32 (quantise in the amax format:
   * each block's fl32(448 / a), from the amax kernel to the encode kernel).
   */
  readonly inbox: WordLayout<InboxBlock>;
  /** Shared readback staging: packed dispatch rows x [P, PWd], scales [P, S], meta [P, 4]; y [M, PWo] at word 0 and the combine sums acc [M, H] f32. */
  readonly outbox: WordLayout<OutboxBlock>;
  /** Shared upload of the packed rows' expert outputs, [P, PWo] words. */
  readonly expertOutBytes: number;
  readonly reportWords: number;
  /** The parameter block: core's `layoutParams` then this package's offsets, in `names` order. */
  readonly names: readonly string[];
  readonly params: Uint32Array;
  readonly heapWindows: Window[];
  readonly localWindows: Window[];
}

export interface DeviceLimits {
  maxStorageBufferBindingSize: number;
  maxBufferSize: number;
}

function fitsU32(name: string, v: number): number {
  if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) {
    throw new UnsupportedError(
      "webgpu",
      `this config: parameter ${name} = ${v} does not fit in a u32 (WebGPU kernels address with 32 bits); shrink the config`,
    );
  }
  return v;
}

/** Plans a session's buffers and parameter block; throws `UnsupportedError` where WebGPU limits are exceeded. */
export function planSession(
  config: Readonly<EpConfig>,
  limits: DeviceLimits,
  maxBinding?: number,
): SessionPlan {
  const layout = computeLayout(config);
  const R = config.ranks;
  const L = localExperts(config);
  const E = config.experts;
  const M = config.maxTokensPerRank;
  const H = config.hidden;
  const K = config.topK;
  const S = scalesPerRow(config, config.dispatchDtype);
  const J = layout.slotsPerRank;
  const W = layout.routeWords;
  const N = layout.rows;
  const G = dpGroups(config);
  const contiguous = config.layout === "contiguous";
  const quantize = config.inputDtype === "bf16" && config.dispatchDtype === "fp8-e4m3";
  const eb = config.dispatchDtype === "bf16" ? 2 : 1;
  const inEb = config.inputDtype === "bf16" ? 2 : 1;
  const PWd = Math.ceil((H * eb) / 4);
  const PWo = Math.ceil(H / 2);
  const packRows = contiguous ? N : R * M * J;
  const home = combineWeightsOf(config) === "home";
  // combine send's jobs per DP group: a record (its partial), or at home a record's entry (a row)
  const jobsMax = home ? R * M * J : R * M;
  const reportWords = REPORT_HEAD + L * R + 2 * L + R;

  const work = new WordLayout<WorkBlock>()
    .add("report", reportWords)
    .add("topkIdx", M * K)
    .add("topkWeights", M * K)
    .add("sendCounts", E)
    .add("sendRecs", R)
    .add("sendArgs", R * 8)
    .add("recs", R * M * W)
    .add("cnt", contiguous ? R * E : 0)
    .add("first", contiguous ? E : 0)
    .add("flag", 4)
    .add("wArgs", R * 8)
    .add("saved", R + R * L)
    .add("prefix", L * R)
    .add("npre", L)
    .add("rrecs", R * M * W)
    .add("entN", R * M * J)
    .add("deliv", packRows)
    .add("seen", L)
    .add("recvArgs", 8)
    .add("cjobs", G * jobsMax)
    .add("cArgs", G * 8)
    .add("sent", G)
    .add("sentRows", G)
    .add("cPuts", G)
    .add("lastJob", home ? M * K : M)
    .add("combineCounts", R)
    .add("combineExpected", R)
    .add("combineRows", R);
  const inbox = new WordLayout<InboxBlock>()
    .add("x", Math.ceil((M * H * inEb) / 4))
    .add("xScales", config.inputDtype === "fp8-e4m3" ? M * S : 0)
    .add("payload", quantize ? (M * H) / 4 : 0)
    .add("payloadScales", quantize ? M * S : 0)
    .add("payloadRecips", quantize && scaleFormatOf(config) === "amax" ? M * S : 0);
  const outbox = new WordLayout<OutboxBlock>()
    .add("x", Math.max(packRows * PWd, M * PWo))
    .add("scales", packRows * S)
    .add("meta", packRows * 4)
    .add("acc", M * H);
  const expertOutBytes = Math.max(256, Math.ceil((packRows * PWo * 4) / 256) * 256);

  const aux: [string, number][] = [
    ["dpGroups", G],
    ["packRows", packRows],
    ["jobsMax", jobsMax],
    ["inbox.send", quantize ? inbox.at("payload") : inbox.at("x")],
    ["inbox.sendScales", quantize ? inbox.at("payloadScales") : inbox.at("xScales")],
    ["inbox.x", inbox.at("x")],
    ["inbox.payload", inbox.at("payload")],
    ["inbox.payloadScales", inbox.at("payloadScales")],
    ["inbox.payloadRecips", inbox.at("payloadRecips")],
    ["outbox.x", outbox.at("x")],
    ["outbox.y", outbox.at("x")],
    ["outbox.scales", outbox.at("scales")],
    ["outbox.meta", outbox.at("meta")],
    ["outbox.acc", outbox.at("acc")],
    ...work.entries().map(([n, o]) => [`work.${n}`, o] as [string, number]),
  ];
  const names = [...PARAM_NAMES, ...aux.map(([n]) => n)];
  const values = [...layoutParams(layout), ...aux.map(([, v]) => v)];
  const params = new Uint32Array(Math.ceil(values.length / 4) * 4);
  values.forEach((v, i) => {
    params[i] = fitsU32(names[i], v);
  });

  const deviceBinding = Math.floor(limits.maxStorageBufferBindingSize / 256) * 256;
  const binding = Math.min(deviceBinding, maxBinding ?? deviceBinding);
  // the largest item one window must hold whole: a payload row, its scales, a record, a bf16 row
  const maxItem = Math.max(PWd * 4, S * 4, W * 4, 16, H * 2) + 8;
  const need = (what: string, bytes: number, bindWhole: boolean) => {
    fitsU32(`${what} bytes`, bytes);
    if (bytes > limits.maxBufferSize) {
      throw new UnsupportedError(
        "webgpu",
        `this config: ${what} needs ${bytes} bytes, more than the device's maxBufferSize ${limits.maxBufferSize}`,
      );
    }
    if (bindWhole && bytes > deviceBinding) {
      throw new UnsupportedError(
        "webgpu",
        `this config: ${what} needs ${bytes} bytes in one storage binding, more than the device's ` +
          `maxStorageBufferBindingSize ${deviceBinding}`,
      );
    }
  };
  need("the symmetric heap", layout.symmetricBytes, false);
  need("the local buffers", layout.localBytes, false);
  need("the work buffer", work.bytes, true);
  need("the input staging buffer", inbox.bytes, true);
  need("the output staging buffer", outbox.bytes, true);
  need("the expert-output staging buffer", expertOutBytes, true);
  return {
    config,
    layout,
    R,
    L,
    M,
    H,
    K,
    S,
    E,
    J,
    W,
    G,
    packRows,
    PWd,
    PWo,
    quantize,
    work,
    inbox,
    outbox,
    expertOutBytes,
    reportWords,
    names,
    params,
    heapWindows: planWindows(Math.max(256, layout.symmetricBytes), binding, maxItem, "the symmetric heap"),
    localWindows: planWindows(Math.max(256, layout.localBytes), binding, maxItem, "the local buffers"),
  };
}
