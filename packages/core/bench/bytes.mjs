// Remote bytes per rank of one step on the reference backend, against a protocol that moves one
// row per (token, expert) each way, at EP4 on a DeepSeek-like layer (hidden 7168, 256 experts,
// top-8, bf16 in, fp8 dispatch), with uniformly random routing.
//   node packages/core/bench/bytes.mjs [--json out.json]
// Needs the built core (npx turbo run build --filter=@switchyard/core).
import { writeFileSync } from "node:fs";
import { defineConfig, dtypeBytes, numberToBf16, ReferenceSession, seededRandom } from "../dist/index.js";

const points = [
  { layout: "masked", tokens: 128 },
  { layout: "contiguous", tokens: 512 },
];
const seed = 20261124;

function inputsFor(config, random) {
  const { ranks: R, experts: E, topK: K, hidden: H, maxTokensPerRank: T } = config;
  return Array.from({ length: R }, () => {
    const x = new Uint16Array(T * H);
    for (let i = 0; i < x.length; i++) x[i] = numberToBf16(random() * 2 - 1);
    const topkIdx = new Int32Array(T * K);
    const topkWeights = new Float32Array(T * K);
    for (let t = 0; t < T; t++) {
      const chosen = new Set();
      while (chosen.size < K) chosen.add(Math.floor(random() * E));
      [...chosen].forEach((e, k) => {
        topkIdx[t * K + k] = e;
        topkWeights[t * K + k] = random();
      });
    }
    return { x, topkIdx, topkWeights };
  });
}

/** Bytes a per-(token, expert) protocol moves to other ranks: one row per remote (token, expert) pair each way. */
function perExpertBytes(config, inputs, rank) {
  const { experts: E, ranks: R, topK: K, hidden: H } = config;
  const L = E / R;
  const row = H * dtypeBytes(config.dispatchDtype) + 4 * (H / 128) + 16;
  let pairs = 0;
  for (let i = 0; i < inputs[rank].topkIdx.length; i++) {
    const e = inputs[rank].topkIdx[i];
    if (e >= 0 && Math.floor(e / L) !== rank) pairs++;
  }
  return { dispatch: pairs * row, combine: pairs * 2 * H, pairs, K };
}

const results = [];
for (const p of points) {
  const config = defineConfig({
    ranks: 4,
    experts: 256,
    topK: 8,
    hidden: 7168,
    maxTokensPerRank: p.tokens,
    dispatchDtype: "fp8-e4m3",
    layout: p.layout,
  });
  const inputs = inputsFor(config, seededRandom(seed));
  const s = new ReferenceSession(config);
  for (let r = 0; r < 4; r++) await s.dispatchSend(r, inputs[r]);
  for (let r = 0; r < 4; r++) {
    const got = await s.dispatchRecv(r);
    await s.combineSend(r, new Uint16Array(got.x.length).fill(numberToBf16(1)));
  }
  for (let r = 0; r < 4; r++) await s.combineRecv(r);
  for (let r = 0; r < 4; r++) {
    const st = await s.stats(r);
    const remote = (t) => t.bytes.reduce((a, b, peer) => a + (peer === r ? 0 : b), 0);
    const v1 = perExpertBytes(config, inputs, r);
    results.push({
      layout: p.layout,
      tokens: p.tokens,
      rank: r,
      dispatchRemoteBytes: remote(st.dispatchSent),
      combineRemoteBytes: remote(st.combineSent),
      perExpertDispatchBytes: v1.dispatch,
      perExpertCombineBytes: v1.combine,
      dispatchRatio: remote(st.dispatchSent) / v1.dispatch,
      combineRatio: remote(st.combineSent) / v1.combine,
    });
  }
  await s.destroy();
}
const mb = (b) => (b / 1e6).toFixed(2);
console.log("layout      tokens rank  dispatch MB (per-expert)  ratio   combine MB (per-expert)  ratio");
for (const r of results)
  console.log(
    `${r.layout.padEnd(11)} ${String(r.tokens).padStart(6)} ${String(r.rank).padStart(4)}  ${mb(r.dispatchRemoteBytes).padStart(6)} (${mb(r.perExpertDispatchBytes).padStart(6)})        ${r.dispatchRatio.toFixed(3)}   ${mb(r.combineRemoteBytes).padStart(6)} (${mb(r.perExpertCombineBytes).padStart(6)})       ${r.combineRatio.toFixed(3)}`,
  );
const out = process.argv.indexOf("--json");
if (out > 0)
  writeFileSync(
    process.argv[out + 1],
    `${JSON.stringify({ seed, command: "node packages/core/bench/bytes.mjs", results }, null, 2)}\n`,
  );
