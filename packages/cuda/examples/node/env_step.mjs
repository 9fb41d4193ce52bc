// One checked MoE step per process, each started by a launcher's environment (torchrun's RANK,
// WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT, or Slurm's / Open MPI's) and a job secret
// every rank shares (SWITCHYARD_JOB_SECRET, or the launcher's job id). Rank 0 serves the NVSHMEM
// unique id over an authenticated rendezvous before any collective; then every rank runs one step
// through its RankEndpoint with identity experts and compares its y with core's reference, bit for bit.
//
//   node packages/cuda/examples/node/env_step.mjs [masked|contiguous]   (one process per rank)
//
// Several ranks on one GPU: SWITCHYARD_CUDA_RANKS_PER_GPU=<n> (4 need an MPS daemon first).
// Exits 0 when the step matched, 1 otherwise.
import { defineConfig, numberToBf16, referenceCombine, seededRandom } from "@switchyard/core";
import { DeviceTensor, startFromEnv } from "@switchyard/cuda";

const layout = process.argv[2] ?? "masked";
const ranks = Number(process.env.WORLD_SIZE ?? 1);
const config = defineConfig({
  ranks,
  experts: 8 * ranks,
  topK: 4,
  hidden: 256,
  maxTokensPerRank: 32,
  layout,
  expertAlignment: layout === "contiguous" ? 4 : 1,
});
const T = 24;
const { hidden: H, topK: K, experts: E } = config;

// Every rank builds every rank's inputs from one seed, so each can check its own y.
const random = seededRandom(20261124);
const inputs = Array.from({ length: ranks }, () => {
  const x = Uint16Array.from({ length: T * H }, () => numberToBf16(random() * 4 - 2));
  const topkIdx = new Int32Array(T * K);
  const topkWeights = new Float32Array(T * K);
  for (let t = 0; t < T; t++) {
    const chosen = new Set();
    for (let k = 0; k < K; k++) {
      let e;
      do e = Math.floor(random() * E);
      while (chosen.has(e));
      chosen.add(e);
      topkIdx[t * K + k] = e;
      topkWeights[t * K + k] = random();
    }
  }
  return { x, topkIdx, topkWeights };
});

const { env, runtime, endpoint } = await startFromEnv(config, { stepTimeoutMs: 10_000 });
const mine = inputs[env.rank];
const x = DeviceTensor.from(mine.x);
const idx = DeviceTensor.from(mine.topkIdx);
const w = DeviceTensor.from(mine.topkWeights);
const y = DeviceTensor.alloc(T * H * 2);
endpoint.dispatchSend({ x, topkIdx: idx, topkWeights: w, numTokens: T });
endpoint.dispatchRecv();
// Identity experts: each delivered row's output is the row itself (bf16 dispatch).
endpoint.combineSend(endpoint.region("recvX"));
endpoint.combineRecv({ topkIdx: idx, numTokens: T, y });
await endpoint.synchronize();
const got = y.download(Uint16Array, T * H);
const want = referenceCombine(config, inputs, (_e, src, t) => inputs[src].x.subarray(t * H, (t + 1) * H))[
  env.rank
];
let mismatches = 0;
for (let i = 0; i < got.length; i++) if (got[i] !== want[i]) mismatches++;
console.log(
  `rank ${env.rank} of ${ranks} (${env.source}, secret from ${env.secretSource ?? "none"}): ${layout} step ${mismatches === 0 ? "PASS" : "FAIL"} (${mismatches} of ${got.length} elements differ from core's reference)`,
);
for (const t of [x, idx, w, y]) t.free();
endpoint.destroy();
runtime.destroy();
process.exit(mismatches === 0 ? 0 : 1);
