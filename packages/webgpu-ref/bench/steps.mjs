#!/usr/bin/env node
// Steps per second of the WebGPU backend (run the package's build first):
//   node bench/steps.mjs [--seconds 10] [--only small|deepseek]
// One step = every rank's dispatchSend, dispatchRecv, combineSend and combineRecv, ranks in order,
// with T = maxTokensPerRank tokens per rank routed uniformly and random expert outputs.
// dispatchSend only submits (it never waits for peers): its GPU time shows up in dispatchRecv.
import { defineConfig, describeLayout, encodeBf16, seededRandom } from "@switchyard/core";
import { webgpuBackend } from "../dist/index.js";

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const seconds = Number(opt("seconds", "10"));
const only = opt("only", "");

const SMALL = { ranks: 4, experts: 16, topK: 4, hidden: 256, maxTokensPerRank: 32 };
const DEEPSEEK = {
  ranks: 4,
  experts: 256,
  topK: 8,
  hidden: 7168,
  maxTokensPerRank: 128,
  inputDtype: "bf16",
  dispatchDtype: "fp8-e4m3",
};
const CASES = [
  ["small", "bf16", { ...SMALL }],
  ["small", "bf16", { ...SMALL, layout: "contiguous" }],
  ["deepseek", "bf16->fp8", { ...DEEPSEEK }],
  ["deepseek", "bf16->fp8", { ...DEEPSEEK, layout: "contiguous" }],
];

const rng = seededRandom;

function inputs(config, rand) {
  const { experts: E, topK: K, hidden: H, maxTokensPerRank: T } = config;
  return Array.from({ length: config.ranks }, () => {
    const topkIdx = new Int32Array(T * K);
    const topkWeights = new Float32Array(T * K);
    for (let t = 0; t < T; t++) {
      const chosen = new Set();
      while (chosen.size < K) chosen.add(Math.floor(rand() * E));
      [...chosen].forEach((e, k) => {
        topkIdx[t * K + k] = e;
        topkWeights[t * K + k] = rand() / K;
      });
    }
    const x = encodeBf16(Array.from({ length: T * H }, () => rand() * 4 - 2));
    return { x, topkIdx, topkWeights };
  });
}

async function bench(name, dtypes, input) {
  const config = defineConfig(input);
  const session = await webgpuBackend.createSession(config);
  const rand = rng(1);
  const ins = inputs(config, rand);
  const out = encodeBf16(
    Array.from({ length: Math.min(session.layout.rows * config.hidden, 1 << 16) }, () => rand() - 0.5),
  );
  const expertOut = new Uint16Array(session.layout.rows * config.hidden);
  for (let i = 0; i < expertOut.length; i += out.length)
    expertOut.set(out.subarray(0, Math.min(out.length, expertOut.length - i)), i);
  const phase = { dispatchSend: 0, dispatchRecv: 0, combineSend: 0, combineRecv: 0 };
  const timed = async (k, p) => {
    const t = performance.now();
    const r = await p();
    phase[k] += performance.now() - t;
    return r;
  };
  const step = async () => {
    for (let r = 0; r < config.ranks; r++) await timed("dispatchSend", () => session.dispatchSend(r, ins[r]));
    for (let r = 0; r < config.ranks; r++) {
      await timed("dispatchRecv", () => session.dispatchRecv(r));
      await timed("combineSend", () => session.combineSend(r, expertOut));
    }
    for (let r = 0; r < config.ranks; r++) await timed("combineRecv", () => session.combineRecv(r));
  };
  await step(); // warm-up: bind groups, first-touch of the heaps
  for (const k of Object.keys(phase)) phase[k] = 0;
  let steps = 0;
  const start = performance.now();
  while (performance.now() - start < seconds * 1000 || steps < 2) {
    await step();
    steps++;
  }
  const ms = performance.now() - start;
  const per = Object.entries(phase)
    .map(([k, v]) => `${k} ${(v / steps).toFixed(1)}`)
    .join(", ");
  const mib = (config.ranks * session.layout.bytesPerRank) / 2 ** 20;
  console.log(
    `${name.padEnd(8)} ${(config.layout ?? "masked").padEnd(10)} ${dtypes.padEnd(9)} R${config.ranks} E${config.experts} ` +
      `K${config.topK} H${config.hidden} T${config.maxTokensPerRank}: ${(steps / (ms / 1000)).toFixed(2)} steps/s ` +
      `(${(ms / steps).toFixed(1)} ms/step; per step ms: ${per}; heaps ${mib.toFixed(0)} MiB)`,
  );
  if (process.env.BENCH_LAYOUT) console.log(describeLayout(session.layout));
  await session.destroy();
}

const reason = await webgpuBackend.unavailableReason();
if (reason) {
  console.error(`webgpu backend unavailable: ${reason}`);
  process.exit(1);
}
for (const [name, dtypes, input] of CASES) {
  if (!only || only === name) await bench(name, dtypes, input);
}
process.exit(0);
