import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  defineConfig,
  type EpConfig,
  localExperts,
  type RankInput,
  ReferenceSession,
  seededRandom as rng,
} from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../../test-support/tempDir.js";

function nvcc(): string | null {
  try {
    execFileSync("nvcc", ["--version"], { stdio: "ignore" });
    return null;
  } catch {
    return "nvcc not found";
  }
}
const skip = nvcc();

interface Case {
  config: EpConfig;
  inputs: RankInput[];
  warps: number;
}

/** A random world: ranks, experts, top-k, tokens per rank, unused slots, DP groups, alignment, chunking. */
function randomCase(seed: number): Case {
  const rand = rng(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
  const ranks = pick([1, 2, 3, 4]);
  const dpSize = pick([1, 1, 1, ranks % 2 === 0 ? 2 : 1]);
  const experts = ranks * pick([1, 2, 3, 8]);
  const topK = 1 + Math.floor(rand() * Math.min(experts, 6));
  const maxTokensPerRank = pick([1, 5, 31, 33, 100]);
  const config = defineConfig({
    ranks,
    dpSize,
    experts,
    topK,
    hidden: 8,
    maxTokensPerRank,
    layout: "contiguous",
    expertAlignment: pick([1, 2, 4, 7, 16]),
  });
  const groups: RankInput[] = [];
  for (let g = 0; g < ranks / dpSize; g++) {
    const T = Math.floor(rand() * (maxTokensPerRank + 1));
    const topkIdx = new Int32Array(T * topK).fill(-1);
    for (let t = 0; t < T; t++) {
      const chosen = new Set<number>();
      for (let k = 0; k < topK; k++) {
        if (rand() < 0.15) continue;
        let e: number;
        do e = Math.floor(rand() * experts);
        while (chosen.has(e));
        chosen.add(e);
        topkIdx[t * topK + k] = e;
      }
    }
    groups.push({
      x: new Uint16Array(T * 8),
      topkIdx,
      topkWeights: new Float32Array(T * topK).fill(0.5),
    });
  }
  const inputs = Array.from({ length: ranks }, (_, r) => groups[Math.floor(r / dpSize)]);
  return { config, inputs, warps: pick([1, 2, 16]) };
}

function programInput(c: Case): string {
  const { config: k } = c;
  const lines = [
    [
      k.ranks,
      localExperts(k),
      k.topK,
      k.maxTokensPerRank,
      k.expertAlignment,
      k.dpSize,
      c.warps,
      0, // the dump's bounded-staging rounds (protocol version 1) are not used any more
    ].join(" "),
  ];
  for (const input of c.inputs)
    lines.push(`${input.topkIdx.length / k.topK} ${Array.from(input.topkIdx).join(" ")}`);
  return `${lines.join("\n")}\n`;
}

describe("the NCCL baseline's index arithmetic (contiguous.cuh compiled for the host) vs core's reference", () => {
  it.skipIf(skip !== null)(
    `route, staging rows, receive tables and compaction give the reference's counts, offsets and row meta${skip ? ` (skipped: ${skip})` : ""}`,
    async () => {
      const dir = tempDir("sy-contig-");
      const exe = join(dir, "contiguous_dump");
      execFileSync(
        "nvcc",
        [
          "-std=c++17",
          "-O2",
          "-x",
          "cu",
          fileURLToPath(new URL("./native/contiguous_dump.cu", import.meta.url)),
          "-o",
          exe,
        ],
        { stdio: "inherit" },
      );
      const base = 9100;
      for (let i = 0; i < 200; i++) {
        const seed = base + i;
        const c = randomCase(seed);
        const out = execFileSync(exe, { input: programInput(c), encoding: "utf8", maxBuffer: 1 << 26 });
        const where = `seed ${seed}, config ${JSON.stringify(c.config)}, warps ${c.warps}`;
        const error = out.split("\n").find((l) => l.startsWith("error"));
        expect(error, where).toBeUndefined();
        const session = new ReferenceSession(c.config);
        for (let r = 0; r < c.config.ranks; r++) await session.dispatchSend(r, c.inputs[r]);
        const lines = out.trim().split("\n");
        let at = 0;
        for (let r = 0; r < c.config.ranks; r++) {
          const want = await session.dispatchRecv(r);
          expect(lines[at++], where).toBe(`rank ${r}`);
          const counts = lines[at++].split(" ").slice(1).map(Number);
          expect(counts, `${where}: rank ${r} counts`).toEqual(Array.from(want.sourceCounts));
          const offsets = lines[at++].split(" ").slice(1).map(Number);
          expect(offsets.slice(0, -1), `${where}: rank ${r} offsets`).toEqual(Array.from(want.expertOffsets));
          const total = offsets[offsets.length - 1];
          const got = lines.slice(at, at + total).join("\n");
          at += total;
          const ref: string[] = [];
          for (let row = 0; row < total; row++)
            ref.push(Array.from(want.meta.subarray(row * 4, row * 4 + 4)).join(" "));
          expect(got, `${where}: rank ${r} row meta`).toBe(ref.join("\n"));
        }
        expect(at, where).toBe(lines.length);
      }
    },
    120_000,
  );
});
