import { parseArgs } from "node:util";
import { DTYPES, type Dtype, type LayoutKind } from "@switchyard/core";
import { PEER_ALIASES, type PeerImpl, parsePeers } from "./peers.js";

/** A bad command line: the message says which flag and why; runBench prints it with the usage. */
export class BenchUsageError extends Error {
  override name = "UsageError";
}

export const BENCH_USAGE = `switchyard bench [options]

Sweeps tokens per rank over one config, for each layout, with the NCCL baseline in the same run;
prints a table while it runs and writes JSON and an SVG plot. Default config: DeepSeek-like
(hidden 7168, 256 experts, top-8, bf16 in, fp8 dispatch with per-128 scales, bf16 combine).

  --ranks <n>              GPUs / ranks (default: every visible GPU)
  --layouts <list>         masked,contiguous (default both)
  --masked-tokens <list>   tokens per rank for masked (default 1,8,32,128,512)
  --contiguous-tokens <l>  tokens per rank for contiguous (default 512,2048,4096,8192)
  --hidden <n>             default 7168
  --experts <n>            default 256
  --topk <n>               default 8
  --input <bf16|fp8-e4m3>  input dtype (default bf16)
  --dispatch <bf16|fp8-e4m3>  dispatch dtype (default fp8-e4m3)
  --alignment <n>          contiguous expertAlignment (default 128)
  --sms <n>                contiguous SM budget: blocks of its copy kernels (default 24)
  --masked-sms <n>         masked SM budget: SMs its grids may use (default: every SM, one wave)
  --steps <n>              measured steps per point (default 300)
  --warmup <n>             warm-up steps per point (default 20)
  --rotate <n>             input sets cycled through (default 4)
  --seed <n>               routing and data seed (default 1)
  --eager                  masked without CUDA graphs (default: graph replay)
  --no-baseline            skip the NCCL baseline
  --peers <list|none>      peer libraries measured after the sweep, same config and routing:
                           deepep (= deepep-ll on masked; deepep-ht and deepep-ht-caller on
                           contiguous: its normal kernels alone, and with its caller's cast, permute
                           per expert and weighted sum in torch, like for like), pplx (masked),
                           switchyard-py (masked: this library through its Python package, timed
                           as the peers are), any of those names alone, or none (default
                           deepep,pplx,switchyard-py: each skipped with the reason when its Python
                           package does not import, or with one rank or ranks sharing a GPU)
  --python <path>          the Python that runs bench-peers/peers.py (default python3)
  --peer-timeout-s <n>     the most one peer's run may take, start to exit (default 300)
  --peer-mib <n>           MiB per peer for the NVLink peer-write measurement (default 256)
  --timeout-ms <n>         receive-stage timeout (default 10000)
  --json <path>            JSON report (default switchyard-bench.json)
  --svg <path>             SVG plot (default switchyard-bench.svg); a Vega-Lite chart of the same data
                           goes beside the JSON (<json name>.vl.json)
  --quick                  50 steps, 5 warm-up, 2 input sets (a smoke run)
  -h, --help               this text
`;

export interface BenchOptions {
  ranks: number | null;
  layouts: LayoutKind[];
  tokens: Record<LayoutKind, number[]>;
  hidden: number;
  experts: number;
  topK: number;
  inputDtype: Dtype;
  dispatchDtype: Dtype;
  alignment: number;
  sms: number;
  /** Masked SM budget; 0: one wave over every SM (the default). */
  maskedSms: number;
  steps: number;
  warmup: number;
  rotate: number;
  seed: number;
  graphs: boolean;
  baseline: boolean;
  peers: PeerImpl[];
  python: string;
  peerTimeoutS: number;
  peerMiB: number;
  timeoutMs: number;
  json: string;
  svg: string;
  help: boolean;
}

function int(flag: string, v: string | undefined, fallback: number, min = 1): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min)
    throw new BenchUsageError(`--${flag} ${v}: expected an integer >= ${min}`);
  return n;
}

function list(flag: string, v: string | undefined, fallback: number[]): number[] {
  if (v === undefined) return fallback;
  const xs = v.split(",").map((s) => s.trim());
  if (xs.length === 0 || xs.some((s) => s === ""))
    throw new BenchUsageError(`--${flag} ${v}: expected a list like 1,8,32`);
  return xs.map((s) => int(flag, s, 0));
}

function dtype(flag: string, v: string | undefined, fallback: Dtype): Dtype {
  if (v === undefined) return fallback;
  const d = v === "fp8" ? "fp8-e4m3" : v;
  if (!DTYPES.includes(d as Dtype))
    throw new BenchUsageError(`--${flag} ${v}: expected one of ${DTYPES.join(", ")}`);
  return d as Dtype;
}

/** Parses `switchyard bench` arguments (after the subcommand). Throws BenchUsageError. */
export function parseBenchArgs(argv: string[]): BenchOptions {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        ranks: { type: "string" },
        layouts: { type: "string" },
        "masked-tokens": { type: "string" },
        "contiguous-tokens": { type: "string" },
        hidden: { type: "string" },
        experts: { type: "string" },
        topk: { type: "string" },
        input: { type: "string" },
        dispatch: { type: "string" },
        alignment: { type: "string" },
        sms: { type: "string" },
        "masked-sms": { type: "string" },
        steps: { type: "string" },
        warmup: { type: "string" },
        rotate: { type: "string" },
        seed: { type: "string" },
        eager: { type: "boolean" },
        "no-baseline": { type: "boolean" },
        peers: { type: "string" },
        python: { type: "string" },
        "peer-timeout-s": { type: "string" },
        "peer-mib": { type: "string" },
        "timeout-ms": { type: "string" },
        json: { type: "string" },
        svg: { type: "string" },
        quick: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (e) {
    throw new BenchUsageError((e as Error).message);
  }
  const s = (k: string) => values[k] as string | undefined;
  const layouts = (s("layouts") ?? "masked,contiguous").split(",").map((x) => x.trim());
  for (const l of layouts) {
    if (l !== "masked" && l !== "contiguous")
      throw new BenchUsageError(`--layouts ${s("layouts")}: "${l}" is neither masked nor contiguous`);
  }
  const quick = values.quick === true;
  const inputDtype = dtype("input", s("input"), "bf16");
  const dispatchDtype = dtype("dispatch", s("dispatch"), "fp8-e4m3");
  if (inputDtype === "fp8-e4m3" && dispatchDtype !== "fp8-e4m3")
    throw new BenchUsageError("--input fp8-e4m3 needs --dispatch fp8-e4m3");
  const peers = parsePeers(s("peers") ?? "deepep,pplx,switchyard-py");
  if (peers === null)
    throw new BenchUsageError(
      `--peers ${s("peers")}: expected none or a list of ${Object.keys(PEER_ALIASES).join(", ")}`,
    );
  const o: BenchOptions = {
    ranks: s("ranks") === undefined ? null : int("ranks", s("ranks"), 0),
    layouts: [...new Set(layouts)] as LayoutKind[],
    tokens: {
      masked: list("masked-tokens", s("masked-tokens"), [1, 8, 32, 128, 512]),
      contiguous: list("contiguous-tokens", s("contiguous-tokens"), [512, 2048, 4096, 8192]),
    },
    hidden: int("hidden", s("hidden"), 7168),
    experts: int("experts", s("experts"), 256),
    topK: int("topk", s("topk"), 8),
    inputDtype,
    dispatchDtype,
    alignment: int("alignment", s("alignment"), 128),
    sms: int("sms", s("sms"), 24),
    maskedSms: int("masked-sms", s("masked-sms"), 0, 0),
    steps: int("steps", s("steps"), quick ? 50 : 300),
    warmup: int("warmup", s("warmup"), quick ? 5 : 20, 0),
    rotate: int("rotate", s("rotate"), quick ? 2 : 4),
    seed: int("seed", s("seed"), 1, 0),
    graphs: values.eager !== true,
    baseline: values["no-baseline"] !== true,
    peers,
    python: s("python") ?? "python3",
    peerTimeoutS: int("peer-timeout-s", s("peer-timeout-s"), 300),
    peerMiB: int("peer-mib", s("peer-mib"), 256),
    timeoutMs: int("timeout-ms", s("timeout-ms"), 10_000),
    json: s("json") ?? "switchyard-bench.json",
    svg: s("svg") ?? "switchyard-bench.svg",
    help: values.help === true,
  };
  if (o.topK > o.experts) throw new BenchUsageError(`--topk ${o.topK} exceeds --experts ${o.experts}`);
  if (dispatchDtype === "fp8-e4m3" && o.hidden % 128 !== 0)
    throw new BenchUsageError(`--hidden ${o.hidden}: fp8 needs a multiple of 128`);
  if (o.ranks !== null && o.experts % o.ranks !== 0)
    throw new BenchUsageError(`--experts ${o.experts} is not a multiple of --ranks ${o.ranks}`);
  for (const l of o.layouts) {
    if (o.tokens[l].some((t) => t < 1)) throw new BenchUsageError(`--${l}-tokens: every count must be >= 1`);
  }
  return o;
}
