// The tables of packages/cuda/docs/multi-node.md, every number from the cost model.
// Print them: `npx turbo run build --filter=@switchyard/cuda-rig && node packages/cuda-rig/dist/model/report.js`
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  type Design,
  deepseekConfig,
  type LayoutConstants,
  type Machine,
  type ModelLayout,
  type Prediction,
  predict,
  traffic,
} from "./costModel.js";
import { type FittedConstants, fit2gpu, fitResiduals, MEASURED_2GPU } from "./fit.js";
import { expectedDistinctGroups } from "./routing.js";

/**
 * Multi-host parameters of the predictions. NVLink: the 2-GPU record's measured peer writes;
 * RDMA: ~50 GB/s for a 400 Gb/s ConnectX-7 (DeepEP's docs/legacy.md); one RDMA hop 3 µs (an
 * assumption, the middle of 2 to 4 µs); an extra NVLink phase 2.0 µs and the forwarder's tables
 * 4.8 µs (the masked-latency record's phase stamps: signals 1.7 to 2.1 µs, receive tables 4.8 µs).
 */
export const MULTI_HOST_MACHINE: Machine = {
  nvlinkGBps: 363.38,
  rdmaGBps: 50,
  rdmaHopUs: 3,
  nvlinkPhaseUs: 2.0,
  forwardTablesUs: 4.8,
  forwardChunkTokens: 256,
};

export interface Scenario {
  name: string;
  tokens: number;
  layout: ModelLayout;
  sms: number;
}

export const SCENARIOS: readonly Scenario[] = [
  { name: "low latency, masked, 128 tokens, 132 SMs", tokens: 128, layout: "masked", sms: 132 },
  { name: "high throughput, contiguous, 4096 tokens, 24 SMs", tokens: 4096, layout: "contiguous", sms: 24 },
];

export const WORLDS: readonly number[] = [16, 32, 64];
const DESIGNS: readonly Design[] = ["flat", "hierarchical"];

/** Published figures placed beside the predictions (µs), with their sources. */
export const PUBLISHED_128: Readonly<Record<number, readonly string[]>> = {
  16: ["DeepEP V1 low latency 118 / 195 (a)", "pplx-kernels IBGDA 622.4 / 668.1 (b)"],
  32: ["DeepEP V1 low latency 155 / 273 (a)", "pplx-kernels IBGDA 427.6 / 481.4 (b)"],
  64: [
    "DeepEP V1 low latency 173 / 314 (a)",
    "pplx-kernels IBGDA 317.4 / 529.9 (b)",
    "Perplexity, CX7 187.5 / 309.1 (c, not re-verified)",
  ],
};

/** DeepEP V1 normal kernels at 4096 tokens: RDMA bottleneck bandwidth, GB/s, dispatch / combine (a). */
export const PUBLISHED_4096: Readonly<Record<number, string>> = {
  16: "DeepEP V1 normal 43 / 43 GB/s RDMA (a)",
  32: "DeepEP V1 normal 58 / 57 GB/s RDMA (a)",
  64: "DeepEP V1 normal 51 / 50 GB/s RDMA (a)",
};

const f1 = (x: number): string => x.toFixed(1);
const f2 = (x: number): string => x.toFixed(2);
const pct = (x: number): string => `${x >= 0 ? "+" : ""}${(100 * x).toFixed(1)} %`;
const mb = (x: number): string => (x / 1e6).toFixed(2);

function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(" | ")} |`;
  return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");
}

export function fitTable(fitted: FittedConstants = fit2gpu()): string {
  const constants = (name: string, k: LayoutConstants): string[] => [
    name,
    f1(k.dispatch.fixedUs),
    f1(k.combine.fixedUs),
    f1(k.dispatch.smGBps),
    f1(k.combine.smGBps),
  ];
  const consts = table(
    [
      "layout",
      "dispatch fixed (µs)",
      "combine fixed (µs)",
      "dispatch per-SM rate (GB/s)",
      "combine per-SM rate (GB/s)",
    ],
    [constants("masked", fitted.masked), constants("contiguous", fitted.contiguous)],
  );
  const rows = fitResiduals(fitted, MEASURED_2GPU).map((r) => [
    `${r.point.layout} ${r.point.tokens}, ${r.point.sms} SMs`,
    `${f1(r.point.dispatchUs)} / ${f1(r.point.combineUs)}`,
    `${f1(r.dispatchUs)} / ${f1(r.combineUs)}`,
    `${pct(r.dispatchError)} / ${pct(r.combineError)}`,
  ]);
  return `${consts}\n\n${table(["point (2 × H100)", "measured dispatch / combine (µs)", "model", "error"], rows)}`;
}

export function fanOutTable(): string {
  const rows = [2, 8, 16, 32, 64].map((R) => {
    const hosts = Math.max(1, R / 8);
    const D = expectedDistinctGroups(256, R, 8);
    const Dh = expectedDistinctGroups(256, hosts, 8);
    const G = Math.min(8, R);
    const remoteRanks = (D * (R - G)) / R;
    const remoteHosts = (Dh * (hosts - 1)) / hosts;
    return [String(R), String(hosts), f2(D), f2(Dh), f2(remoteRanks), f2(remoteHosts)];
  });
  return table(
    [
      "ranks",
      "hosts of 8",
      "distinct ranks a token",
      "distinct hosts a token",
      "rows a token over RDMA, flat",
      "rows a token over RDMA, hierarchical",
    ],
    rows,
  );
}

export function trafficTable(): string {
  const rows: string[][] = [];
  for (const s of SCENARIOS) {
    for (const R of WORLDS) {
      for (const d of DESIGNS) {
        const t = traffic(deepseekConfig(s.tokens, R, 8), d);
        const ph = (p: typeof t.dispatch): string =>
          `${mb(p.nvlinkBytes)} / ${mb(p.rdmaBytes)} / ${p.rdmaPuts} × ${mb(p.rdmaBytesPerPut)} / ${Math.round(p.rdmaRows)}`;
        rows.push([
          `${s.tokens}`,
          `EP${R}`,
          d,
          ph(t.dispatch),
          ph(t.combine),
          s.layout === "masked" ? `${mb(t.buffers.dispatch)} / ${mb(t.buffers.combine)}` : "—",
        ]);
      }
    }
  }
  return table(
    [
      "tokens",
      "world",
      "design",
      "dispatch: NVLink MB / RDMA MB / puts × MB each / rows over RDMA",
      "combine: same",
      "masked buffers MB (dispatch / combine)",
    ],
    rows,
  );
}

export function predictionsOf(machine: Machine = MULTI_HOST_MACHINE, fitted: FittedConstants = fit2gpu()) {
  const out: { scenario: Scenario; ranks: number; design: Design; p: Prediction }[] = [];
  for (const s of SCENARIOS) {
    for (const R of WORLDS) {
      for (const d of DESIGNS) {
        const p = predict(deepseekConfig(s.tokens, R, 8), d, s.layout, machine, fitted[s.layout], s.sms);
        out.push({ scenario: s, ranks: R, design: d, p });
      }
    }
  }
  return out;
}

export function predictionTable(
  machine: Machine = MULTI_HOST_MACHINE,
  fitted: FittedConstants = fit2gpu(),
): string {
  const all = predictionsOf(machine, fitted);
  const rows: string[][] = [];
  for (const s of SCENARIOS) {
    for (const R of WORLDS) {
      const cells = DESIGNS.map((d) => {
        const p = all.find((x) => x.scenario === s && x.ranks === R && x.design === d)!.p;
        return `${f1(p.dispatch.totalUs)} / ${f1(p.combine.totalUs)}`;
      });
      const published = s.tokens === 128 ? PUBLISHED_128[R].join("; ") : PUBLISHED_4096[R];
      rows.push([
        `${s.tokens} tokens, ${s.layout}, ${s.sms} SMs`,
        `EP${R} (${R / 8} hosts)`,
        ...cells,
        published,
      ]);
    }
  }
  return table(
    [
      "point",
      "world",
      "PREDICTION flat dispatch / combine (µs)",
      "PREDICTION hierarchical dispatch / combine (µs)",
      "published (measured elsewhere, other GPUs)",
    ],
    rows,
  );
}

export function breakdownTable(
  machine: Machine = MULTI_HOST_MACHINE,
  fitted: FittedConstants = fit2gpu(),
): string {
  const rows = predictionsOf(machine, fitted).map(({ scenario, ranks, design, p }) => {
    const ph = (x: typeof p.dispatch): string =>
      `${f1(x.fixedUs)} + ${f1(x.countsUs)} + ${f1(x.linkUs)} + ${f1(x.smUs)}`;
    const rdmaUse = (bytes: number, us: number): string => f1(bytes / us / 1e3);
    return [
      `${scenario.tokens}`,
      `EP${ranks}`,
      design,
      ph(p.dispatch),
      ph(p.combine),
      `${rdmaUse(p.traffic.dispatch.rdmaBytes, p.dispatch.totalUs)} / ${rdmaUse(p.traffic.combine.rdmaBytes, p.combine.totalUs)}`,
    ];
  });
  return table(
    [
      "tokens",
      "world",
      "design",
      "dispatch: fixed + counts + links + SMs (µs)",
      "combine: same",
      "RDMA GB/s achieved (bytes / predicted time)",
    ],
    rows,
  );
}

export function sensitivityTable(fitted: FittedConstants = fit2gpu()): string {
  const variants: { name: string; m: Machine }[] = [
    { name: "as above (RDMA 50 GB/s, hop 3 µs)", m: MULTI_HOST_MACHINE },
    { name: "hop 2 µs", m: { ...MULTI_HOST_MACHINE, rdmaHopUs: 2 } },
    { name: "hop 4 µs", m: { ...MULTI_HOST_MACHINE, rdmaHopUs: 4 } },
    { name: "RDMA 40 GB/s", m: { ...MULTI_HOST_MACHINE, rdmaGBps: 40 } },
    { name: "forwarder stage x2 (13.6 µs)", m: { ...MULTI_HOST_MACHINE, forwardTablesUs: 11.6 } },
    // The put path's cost over the store path, measured with puts forced over NVLink (masked 128,
    // results/2026-11-26-put-path): a first correction for the remote legs' sends.
    {
      name: "put path's measured send cost (+9.6 / +4.3 µs)",
      m: { ...MULTI_HOST_MACHINE, putSendUs: { dispatch: 9.6, combine: 4.3 } },
    },
  ];
  const rows = variants.map(({ name, m }) => {
    const cells = WORLDS.flatMap((R) =>
      DESIGNS.map((d) => {
        const p = predict(deepseekConfig(128, R, 8), d, "masked", m, fitted.masked, 132);
        return `${f1(p.dispatch.totalUs)} / ${f1(p.combine.totalUs)}`;
      }),
    );
    return [name, ...cells];
  });
  const head = ["masked 128, variant", ...WORLDS.flatMap((R) => DESIGNS.map((d) => `EP${R} ${d}`))];
  return table(head, rows);
}

export function report(): string {
  return [
    "## Fit to the 2-GPU record",
    fitTable(),
    "## Fan-out under uniform top-8 over 256 experts",
    fanOutTable(),
    "## Traffic per rank and step",
    trafficTable(),
    "## PREDICTIONS",
    predictionTable(),
    "## Breakdown",
    breakdownTable(),
    "## Sensitivity (masked 128)",
    sensitivityTable(),
  ].join("\n\n");
}

function isMain(): boolean {
  const arg = process.argv[1];
  if (!arg) return false;
  try {
    return realpathSync(arg) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) console.log(report());
