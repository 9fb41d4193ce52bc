import {
  computeLayout,
  dpGroups,
  type EpConfig,
  type Layout,
  layoutParams,
  localExperts,
  PARAM_NAMES,
  scalesPerRow,
  UnsupportedError,
} from "@switchyard/core";
import { planWindows, type Window } from "./windows.js";
import { WordLayout } from "./words.js";

/**
 * Everything a session allocates besides the heaps, derived once from the config. Symbols as in
 * core's layout: R ranks, L local experts, M maxTokensPerRank, H hidden, K topK, S = H/128 scales
 * per row (fp8), C = rowsPerSource, N = layout.rows, G DP groups; D = R * C, the most rows a rank
 * can receive; PWd = ceil(H * dispatch bytes / 4) and PWo = ceil(H / 2) words per packed row.
 * All offsets below are in u32 words.
 */
export type WorkBlock =
  /** [16 + L*R + 2L]: status [8], scalars [8], sourceCounts [L, R], expertCounts [L], expertOffsets [L]; read back by the host. */
  | "report"
  /** [M, K] i32 and [M, K] f32: this rank's routing, kept from dispatchSend to combineRecv. */
  | "topkIdx"
  | "topkWeights"
  /** dispatch send plan: rows per global expert [R*L], rows per destination [R], indirect args [R, 8], jobs [R, C, 2] = (t*K + k, destination row). */
  | "sendCounts"
  | "sendTotal"
  | "sendArgs"
  | "jobs"
  /** dispatch recv: signal words as read [max(L*R, R*(L+1))], contiguous totals per source [R]; combine send reads them again into rechk. */
  | "saved"
  | "rechk"
  | "totals"
  /** per (e, s) [L, R]: first index in the delivered list, first staging row, first output row. */
  | "esStart"
  | "srcStart"
  | "dstStart"
  /** indirect args [8] of gather / pack: (groups, rows, 1, 0, 1, rows, 1, 0). */
  | "recvArgs"
  /** delivered rows in (e, s, i) order [D]; contiguous: staging row (or padding mark) of each output row [N]. */
  | "deliv"
  | "gsrc"
  /** combine send: token*K + slot and source rank of each delivered row [D]. */
  | "rowTok"
  | "rowSrc"
  /** combine send per DP group: delivered-list indices [G, D], indirect args [G, 8], rows sent [G]. */
  | "cjobs"
  | "cArgs"
  | "sent"
  /** combine recv: signal words of each expert rank as read [R]; slots this rank's tokens route to each [R]. */
  | "combineCounts"
  | "combineExpected";

export type InboxBlock = "x" | "xScales" | "payload" | "payloadScales";
export type OutboxBlock = "x" | "scales" | "meta";

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
  readonly C: number;
  readonly G: number;
  /** Most rows a rank receives in a step (R * C). */
  readonly D: number;
  /** Most rows dispatchRecv reads back: masked D, contiguous N (padding included). */
  readonly packRows: number;
  /** Words per packed dispatch row, per padded bf16 row. */
  readonly PWd: number;
  readonly PWo: number;
  readonly quantize: boolean;
  readonly work: WordLayout<WorkBlock>;
  /** Shared upload buffer: x [M, H] (input dtype), xScales [M, S], payload [M, H] fp8 and payloadScales [M, S] (quantise only). */
  readonly inbox: WordLayout<InboxBlock>;
  /** Shared readback staging: packed dispatch rows x [P, PWd], scales [P, S], meta [P, 4]; y [M, PWo] at word 0. */
  readonly outbox: WordLayout<OutboxBlock>;
  /** Shared upload of expert outputs in delivered order, [D, PWo] words. */
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
  const M = config.maxTokensPerRank;
  const H = config.hidden;
  const K = config.topK;
  const S = scalesPerRow(config, config.dispatchDtype);
  const C = layout.rowsPerSource;
  const N = layout.rows;
  const G = dpGroups(config);
  const D = R * C;
  const contiguous = config.layout === "contiguous";
  const quantize = config.inputDtype === "bf16" && config.dispatchDtype === "fp8-e4m3";
  const eb = config.dispatchDtype === "bf16" ? 2 : 1;
  const inEb = config.inputDtype === "bf16" ? 2 : 1;
  const PWd = Math.ceil((H * eb) / 4);
  const PWo = Math.ceil(H / 2);
  const packRows = contiguous ? N : D;

  const work = new WordLayout<WorkBlock>()
    .add("report", 16 + L * R + 2 * L)
    .add("topkIdx", M * K)
    .add("topkWeights", M * K)
    .add("sendCounts", R * L)
    .add("sendTotal", R)
    .add("sendArgs", R * 8)
    .add("jobs", R * C * 2)
    .add("saved", Math.max(L * R, R * (L + 1)))
    .add("rechk", Math.max(L * R, R * (L + 1)))
    .add("totals", R)
    .add("esStart", L * R)
    .add("srcStart", L * R)
    .add("dstStart", L * R)
    .add("recvArgs", 8)
    .add("deliv", D)
    .add("gsrc", contiguous ? N : 0)
    .add("rowTok", D)
    .add("rowSrc", D)
    .add("cjobs", G * D)
    .add("cArgs", G * 8)
    .add("sent", G)
    .add("combineCounts", R)
    .add("combineExpected", R);
  const inbox = new WordLayout<InboxBlock>()
    .add("x", Math.ceil((M * H * inEb) / 4))
    .add("xScales", config.inputDtype === "fp8-e4m3" ? M * S : 0)
    .add("payload", quantize ? (M * H) / 4 : 0)
    .add("payloadScales", quantize ? M * S : 0);
  const outbox = new WordLayout<OutboxBlock>()
    .add("x", Math.max(packRows * PWd, M * PWo))
    .add("scales", packRows * S)
    .add("meta", packRows * 4);
  const expertOutBytes = Math.max(256, Math.ceil((D * PWo * 4) / 256) * 256);

  const aux: [string, number][] = [
    ["dpGroups", G],
    ["deliveredMax", D],
    ["inbox.send", quantize ? inbox.at("payload") : inbox.at("x")],
    ["inbox.sendScales", quantize ? inbox.at("payloadScales") : inbox.at("xScales")],
    ["inbox.x", inbox.at("x")],
    ["inbox.payload", inbox.at("payload")],
    ["inbox.payloadScales", inbox.at("payloadScales")],
    ["outbox.x", outbox.at("x")],
    ["outbox.scales", outbox.at("scales")],
    ["outbox.meta", outbox.at("meta")],
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
  const maxItem = Math.max(PWd * 4, S * 4, 16, K * H * 2, H * 2) + 8;
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
  const reportWords = 16 + L * R + 2 * L;
  return {
    config,
    layout,
    R,
    L,
    M,
    H,
    K,
    S,
    C,
    G,
    D,
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
