// A cost model of one MoE step's communication per rank, for the two multi-host designs of
// packages/cuda/docs/multi-node.md: flat puts (every rank to every destination rank) and
// hierarchical forwarding (RDMA to the same-local-index GPU of each remote host, NVLink inside).
// Bytes follow protocol version 2 (docs/protocol.md): one route record per (token, destination
// rank), one bf16 partial per (token, home rank). Units: bytes, µs, GB/s (1e9 bytes / s).
import { expectedDistinctGroups, hitProbability } from "./routing.js";

export type Design = "flat" | "hierarchical";
export type ModelLayout = "masked" | "contiguous";

/** The MoE config and the world. */
export interface ModelConfig {
  hidden: number;
  experts: number;
  topK: number;
  /** Tokens per rank, T (also the masked buffers' maxTokensPerRank). */
  tokens: number;
  ranks: number;
  /** GPUs per host; a world of at most this many ranks is one host. */
  gpusPerHost: number;
  /** Bytes per element of the rank's input (bf16: 2). */
  inputBytes: number;
  /** Bytes per element on the wire in dispatch (fp8: 1, bf16: 2). */
  dispatchBytes: number;
  /** Elements per fp32 block scale in dispatch (0: no scales). */
  scaleBlock: number;
  /** Bytes per element of a combine partial (bf16: 2). */
  combineBytes: number;
}

/** The DeepSeek-like config of the project's records: hidden 7168, 256 experts, top-8, fp8 dispatch. */
export function deepseekConfig(tokens: number, ranks: number, gpusPerHost = 8): ModelConfig {
  return {
    hidden: 7168,
    experts: 256,
    topK: 8,
    tokens,
    ranks,
    gpusPerHost,
    inputBytes: 2,
    dispatchBytes: 1,
    scaleBlock: 128,
    combineBytes: 2,
  };
}

/** Links and the fixed costs that are not fitted. */
export interface Machine {
  /** Per-GPU NVLink egress (the 2-GPU record's peer-write figure). */
  nvlinkGBps: number;
  /** Per-GPU RDMA bandwidth (one NIC a GPU). */
  rdmaGBps: number;
  /** One RDMA hop: put issued to data and signal visible at the destination. */
  rdmaHopUs: number;
  /** One extra NVLink phase: stores, fence, release, the waiter sees it. */
  nvlinkPhaseUs: number;
  /** The forwarder's own work before it can forward: signal wait, count words, tables. */
  forwardTablesUs: number;
  /** Tokens a forwarding chunk carries (hierarchical pipelining: RDMA of chunk i+1 overlaps forwarding of chunk i). */
  forwardChunkTokens: number;
  /**
   * The put path's fixed cost a send phase adds to a world with other hosts, over the store path
   * the 2-GPU fit measured (outbox, quiet, fence and signal); absent: none.
   */
  putSendUs?: { dispatch: number; combine: number };
}

/** What the 2-GPU fit supplies, per layout. */
export interface PhaseConstants {
  /** Fixed per-phase latency: launches, plan, tables, fences, one NVLink hop. */
  fixedUs: number;
  /** Bytes the SMs load and store, per SM per µs, as GB/s per SM. */
  smGBps: number;
}

export interface LayoutConstants {
  dispatch: PhaseConstants;
  combine: PhaseConstants;
}

/** Per-rank traffic of one phase. */
export interface PhaseTraffic {
  /** NVLink egress bytes a rank stores to other GPUs of its host. */
  nvlinkBytes: number;
  /** The part of nvlinkBytes that waits on RDMA (hierarchical: forwarded rows / host partials). */
  nvlinkDependentBytes: number;
  /** RDMA egress bytes of a GPU's NIC. */
  rdmaBytes: number;
  /** RDMA put-with-signal operations a rank issues with rows coalesced (one per remote peer). */
  rdmaPuts: number;
  /** Remote peers (queue pairs, one a peer) of a rank's NIC. */
  rdmaPeers: number;
  /** Rows a rank sends over RDMA (= puts without coalescing). */
  rdmaRows: number;
  /** Mean bytes of one coalesced put. */
  rdmaBytesPerPut: number;
  /** Bytes the SMs load and store (input, rows, staging, fan-out). */
  smBytes: number;
}

/** Symmetric and staging buffers of the masked layout, bytes per rank (M = tokens). */
export interface Buffers {
  dispatch: number;
  combine: number;
}

export interface Traffic {
  design: Design;
  hosts: number;
  /** Expected distinct destination ranks of a token (self included). */
  distinctRanks: number;
  /** Expected distinct destination hosts of a token (own host included). */
  distinctHosts: number;
  dispatch: PhaseTraffic;
  combine: PhaseTraffic;
  buffers: Buffers;
}

function hostsOf(c: ModelConfig): { hosts: number; perHost: number } {
  if (c.ranks <= c.gpusPerHost) return { hosts: 1, perHost: c.ranks };
  if (c.ranks % c.gpusPerHost !== 0) {
    throw new RangeError(`ranks (${c.ranks}) must be a multiple of gpusPerHost (${c.gpusPerHost})`);
  }
  return { hosts: c.ranks / c.gpusPerHost, perHost: c.gpusPerHost };
}

/** Bytes of a dispatch row on the wire whose route record lists up to `slots` entries. */
export function dispatchRowBytes(c: ModelConfig, slots: number): number {
  const scales = c.scaleBlock > 0 ? (c.hidden / c.scaleBlock) * 4 : 0;
  return c.hidden * c.dispatchBytes + scales + 4 * (2 + 4 * slots);
}

export function combineRowBytes(c: ModelConfig): number {
  return c.hidden * c.combineBytes;
}

/** Per-rank bytes, rows and messages of one step for a design. */
export function traffic(c: ModelConfig, design: Design): Traffic {
  if (c.experts % c.ranks !== 0) throw new RangeError("experts must be divisible by ranks");
  const { hosts: N, perHost: G } = hostsOf(c);
  const T = c.tokens;
  const R = c.ranks;
  const E = c.experts;
  const K = c.topK;
  const L = E / R;
  const pr = hitProbability(E, L, K); // a token reaches one given rank
  const ph = hitProbability(E, E / N, K); // ... one given host
  const D = expectedDistinctGroups(E, R, K);
  const Dh = expectedDistinctGroups(E, N, K);
  const rowD = dispatchRowBytes(c, Math.min(K, L));
  const rowDh = dispatchRowBytes(c, Math.min(K, E / N)); // a record naming every slot on the host
  const rowC = combineRowBytes(c);
  const input = c.hidden * c.inputBytes;
  const remoteRanks = R - G;
  const flatOrOneHost = design === "flat" || N === 1;

  if (flatOrOneHost) {
    const rdmaRows = remoteRanks * pr * T;
    const put = (rows: number, bytes: number): number => (remoteRanks > 0 ? (rows * bytes) / remoteRanks : 0);
    return {
      design,
      hosts: N,
      distinctRanks: D,
      distinctHosts: Dh,
      dispatch: {
        nvlinkBytes: (G - 1) * pr * T * rowD,
        nvlinkDependentBytes: 0,
        rdmaBytes: rdmaRows * rowD,
        rdmaPuts: remoteRanks,
        rdmaPeers: remoteRanks,
        rdmaRows,
        rdmaBytesPerPut: put(rdmaRows, rowD),
        // send: read the input, store one row a destination rank; receive: read them, store one per entry
        smBytes: T * (input + 2 * D * rowD + K * rowD),
      },
      combine: {
        nvlinkBytes: (G - 1) * pr * T * rowC,
        nvlinkDependentBytes: 0,
        rdmaBytes: rdmaRows * rowC,
        rdmaPuts: remoteRanks,
        rdmaPeers: remoteRanks,
        rdmaRows,
        rdmaBytesPerPut: put(rdmaRows, rowC),
        // send: read K expert rows a token, store one partial a home; home: read them
        smBytes: T * rowC * (K + 2 * D),
      },
      buffers: {
        // receive slots [R, M, row] plus a registered send staging [R - G, M, row] for the puts
        dispatch: (R + remoteRanks) * T * rowD,
        combine: (R + remoteRanks) * T * rowC,
      },
    };
  }

  // Hierarchical: rank (host h, local i) sends a token once to (host h', local i) for every other
  // host h' it reaches; that forwarder fans it out over NVLink to the token's ranks of h'.
  const rdmaRowsD = (N - 1) * ph * T;
  const ownHostD = (G - 1) * pr * T; // rows to the other GPUs of the own host, straight
  const forwardedD = (N - 1) * (G - 1) * pr * T; // rows a forwarder stores to the other GPUs of its host
  // Combine: an expert rank sends its partial for a remote home to its own host's forwarder of
  // the home's local index (itself 1 time in G); the forwarder sums them and sends one host
  // partial per (token, remote home); partials for the own host go straight home.
  const reduceC = ((G - 1) / G) * remoteRanks * pr * T;
  const ownHostC = (G - 1) * pr * T;
  const rdmaRowsC = (N - 1) * ph * T;
  return {
    design,
    hosts: N,
    distinctRanks: D,
    distinctHosts: Dh,
    dispatch: {
      nvlinkBytes: (ownHostD + forwardedD) * rowD,
      nvlinkDependentBytes: forwardedD * rowD,
      rdmaBytes: rdmaRowsD * rowDh,
      rdmaPuts: N - 1,
      rdmaPeers: N - 1,
      rdmaRows: rdmaRowsD,
      rdmaBytesPerPut: (rdmaRowsD * rowDh) / (N - 1),
      // as flat, plus the staging row a destination host and the forwarder's read of it
      smBytes: T * (input + 2 * D * rowD + K * rowD) + 2 * rdmaRowsD * rowDh,
    },
    combine: {
      nvlinkBytes: (reduceC + ownHostC) * rowC,
      nvlinkDependentBytes: reduceC * rowC,
      rdmaBytes: rdmaRowsC * rowC,
      rdmaPuts: N - 1,
      rdmaPeers: N - 1,
      rdmaRows: rdmaRowsC,
      rdmaBytesPerPut: (rdmaRowsC * rowC) / (N - 1),
      smBytes: T * rowC * (K + 2 * D) + 2 * rdmaRowsC * rowC,
    },
    buffers: {
      // receive slots [R, M, row] (a slot per source rank, so addresses stay formulas), RDMA
      // receive [N - 1, M, host row] on the forwarder, RDMA send staging [N - 1, M, host row]
      dispatch: R * T * rowD + 2 * (N - 1) * T * rowDh,
      // home: [G + N - 1, M] partials; forwarder: [G, N - 1, M] to reduce, [N - 1, M] to send
      combine: (G + N - 1 + G * (N - 1) + (N - 1)) * T * rowC,
    },
  };
}

/** Time of a two-stage pipeline of `chunks` equal chunks: a then b per chunk. */
export function pipelined(a: number, b: number, chunks: number): number {
  const n = Math.max(1, Math.floor(chunks));
  return Math.max(a, b) + Math.min(a, b) / n;
}

/** Transfer time, µs, of `bytes` at `gbps` (1e9 bytes / s = 1e3 bytes / µs). */
export function transferUs(bytes: number, gbps: number): number {
  return bytes / (gbps * 1e3);
}

export interface PhaseTime {
  totalUs: number;
  fixedUs: number;
  /** Count exchange before data (contiguous layout, other hosts): one RDMA hop. */
  countsUs: number;
  /** The links' critical path (NVLink and RDMA, hops and forwarding included). */
  linkUs: number;
  /** Per-SM work: smBytes over sms × the fitted per-SM rate. */
  smUs: number;
}

export interface Prediction {
  traffic: Traffic;
  dispatch: PhaseTime;
  combine: PhaseTime;
}

/** The predicted time of each phase. Link time and SM time add (the kernels do not overlap them). */
export function predict(
  c: ModelConfig,
  design: Design,
  layout: ModelLayout,
  machine: Machine,
  constants: LayoutConstants,
  sms: number,
): Prediction {
  const t = traffic(c, design);
  const multiHost = t.hosts > 1;
  const chunks = Math.ceil(c.tokens / machine.forwardChunkTokens);
  const phase = (p: PhaseTraffic, k: PhaseConstants, combine: boolean): PhaseTime => {
    const nvl = transferUs(p.nvlinkBytes, machine.nvlinkGBps);
    const rdma = transferUs(p.rdmaBytes, machine.rdmaGBps);
    let linkUs: number;
    if (!multiHost) linkUs = nvl;
    else if (design === "flat") linkUs = Math.max(nvl, machine.rdmaHopUs + rdma);
    else {
      const dependent = transferUs(p.nvlinkDependentBytes, machine.nvlinkGBps);
      const stage = machine.nvlinkPhaseUs + machine.forwardTablesUs;
      // dispatch: RDMA then forward over NVLink; combine: reduce over NVLink then RDMA
      const chain = combine ? pipelined(dependent, rdma, chunks) : pipelined(rdma, dependent, chunks);
      linkUs = Math.max(nvl, machine.rdmaHopUs + stage + chain);
    }
    const countsUs = layout === "contiguous" && multiHost && !combine ? machine.rdmaHopUs : 0;
    const smUs = transferUs(p.smBytes, k.smGBps * sms);
    const puts = multiHost ? ((combine ? machine.putSendUs?.combine : machine.putSendUs?.dispatch) ?? 0) : 0;
    const fixedUs = k.fixedUs + puts;
    return { totalUs: fixedUs + countsUs + linkUs + smUs, fixedUs, countsUs, linkUs, smUs };
  };
  return {
    traffic: t,
    dispatch: phase(t.dispatch, constants.dispatch, false),
    combine: phase(t.combine, constants.combine, true),
  };
}
