import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../../../test-support/tempDir.js";
import { parseBenchArgs } from "../../src/bench/args.js";
import { writePeerInputs } from "../../src/bench/peerInputs.js";
import { parsePeerLine } from "../../src/bench/peerLines.js";
import { PEER_SCRIPT } from "../../src/bench/peerSweep.js";
import { PEER_IMPLS } from "../../src/bench/peers.js";
import { planPoints } from "../../src/bench/plan.js";
import { expectedCounts } from "../../src/bench/routing.js";

const python = spawnSync("python3", ["--version"]).status === 0 ? "python3" : null;
const hasTorch = python !== null && spawnSync(python, ["-c", "import torch"]).status === 0;
const folder = join(PEER_SCRIPT, "..");
/** A Python that imports torch (a CPU build is enough), for the caller's torch work; null where none does. */
const torchPython =
  ["python3", "/usr/bin/python3"].find((p) => spawnSync(p, ["-c", "import torch"]).status === 0) ?? null;
const run = (args: string[]) =>
  execFileSync(python!, [PEER_SCRIPT, ...args], {
    encoding: "utf8",
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
  });

describe.skipIf(python === null)(
  `the peer scripts (bench-peers/)${python ? "" : " (skipped: no python3 here)"}`,
  () => {
    it("every file compiles", () => {
      const files = readdirSync(folder).filter((f) => f.endsWith(".py"));
      expect(files).toEqual(
        expect.arrayContaining([
          "peers.py",
          "worker.py",
          "timing.py",
          "deepep_ll.py",
          "deepep_ht.py",
          "deepep_ht_caller.py",
          "expert_permute.py",
          "pplx.py",
          "switchyard_py.py",
        ]),
      );
      const out = tempDir("sy-pyc-");
      const code =
        "import py_compile, sys\nfor i, f in enumerate(sys.argv[2:]): py_compile.compile(f, cfile=f'{sys.argv[1]}/{i}.pyc', doraise=True)";
      execFileSync(python!, ["-c", code, out, ...files.map((f) => join(folder, f))]);
    });

    it("takes the same peer names as the bench (--peer's choices are PEER_IMPLS)", () => {
      const usage = run(["--help"]).replace(/\s+/g, " ");
      const choices = usage.match(/--peer \{([^}]+)\}/)?.[1].split(",");
      expect(choices?.sort()).toEqual([...PEER_IMPLS].sort());
    });

    it("reads the routing the bench writes as the bench does: the same counts per local expert", () => {
      const o = parseBenchArgs([
        "--masked-tokens",
        "1,8",
        "--contiguous-tokens",
        "64",
        "--rotate",
        "2",
        "--seed",
        "5",
      ]);
      const points = planPoints(o, 2);
      const dir = tempDir("sy-peer-inputs-");
      const routings = writePeerInputs(dir, o, 2, points);
      const lines = run(["--inputs", dir, "--describe"]).trim().split("\n").map(parsePeerLineLoose);
      expect(lines).toHaveLength(points.length * 2);
      for (const l of lines) {
        const p = points.find((q) => q.layout === l.layout && q.tokens === l.tokens)!;
        const want = [0, 1].map((r) => [...expectedCounts(p.config, routings.get(p)![l.set], r)]);
        // The bench's counts are [local expert, source]; the script's are summed over sources.
        const summed = want.map((c) =>
          Array.from({ length: c.length / 2 }, (_, e) => c[2 * e] + c[2 * e + 1]),
        );
        expect(l.counts, `${l.layout} ${l.tokens} set ${l.set}`).toEqual(summed);
      }
    });

    it.skipIf(hasTorch)("without torch a peer is one skip line with the import error, exit 0", () => {
      const o = parseBenchArgs(["--masked-tokens", "1", "--contiguous-tokens", "64"]);
      const dir = tempDir("sy-peer-inputs-");
      writePeerInputs(dir, o, 2, planPoints(o, 2));
      for (const impl of ["pplx", "deepep-ht-caller", "switchyard-py"]) {
        const msg = parsePeerLine(run(["--inputs", dir, "--peer", impl]).trim());
        expect(msg).toMatchObject({ kind: "skip", impl, reason: expect.stringMatching(/torch/) });
      }
    });
  },
);

describe.skipIf(torchPython === null)(
  `the caller's torch work (bench-peers/expert_permute.py)${torchPython ? "" : " (skipped: no python with torch here)"}`,
  () => {
    it("packs rows per local expert and sums them back per token as plain loops do", () => {
      const script = join(import.meta.dirname, "expertPermute.py");
      const out = execFileSync(torchPython!, [script, folder, "1"], {
        encoding: "utf8",
        env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
      });
      expect(out).toMatch(/^ok /);
    });
  },
);

/** A "describe" line (not one of the bench's message kinds). */
function parsePeerLineLoose(line: string) {
  return JSON.parse(line.slice(line.indexOf("{"))) as {
    layout: string;
    tokens: number;
    set: number;
    counts: number[][];
  };
}
