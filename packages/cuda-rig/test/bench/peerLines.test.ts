import { describe, expect, it } from "vitest";
import { BENCH_USAGE, BenchUsageError, parseBenchArgs } from "../../src/bench/args.js";
import { PEER_PREFIX, parsePeerLine } from "../../src/bench/peerLines.js";
import { peerPoint, peerSkipped } from "../../src/bench/peerPoints.js";
import { PEER_IMPLS, PEER_LAYOUT, parsePeers } from "../../src/bench/peers.js";
import { PHASES } from "../../src/bench/report.js";
import { benchRouting, meanRemoteBytes } from "../../src/bench/routing.js";
import { point } from "./fixtures.js";

const line = (o: object) => `${PEER_PREFIX}${JSON.stringify(o)}`;
const rank = (r: number, sms: number | null = null) => ({
  rank: r,
  samplesUs: { dispatch: [10 + r, 11 + r], combine: [20, 21], step: [30, 32 + r] },
  deviceBytes: 1e8,
  deviceUsedBytes: 2e9,
  sms,
  errors: [],
});

describe("--peers", () => {
  it("expands deepep to its three rows, keeps the order, takes none", () => {
    expect(parsePeers("deepep,pplx")).toEqual(["deepep-ll", "deepep-ht", "deepep-ht-caller", "pplx"]);
    expect(parsePeers("pplx,deepep-ht")).toEqual(["deepep-ht", "pplx"]);
    expect(parsePeers("none")).toEqual([]);
    expect(parsePeers("deepep,mori")).toBeNull();
    expect(parseBenchArgs([]).peers).toEqual([
      "deepep-ll",
      "deepep-ht",
      "deepep-ht-caller",
      "pplx",
      "switchyard-py",
    ]);
    expect(parseBenchArgs(["--peers", "none"]).peers).toEqual([]);
    expect(parseBenchArgs(["--python", "/opt/py/bin/python3"]).python).toBe("/opt/py/bin/python3");
    expect(() => parseBenchArgs(["--peers", "nvshmem"])).toThrow(/--peers nvshmem: expected none or a list/);
    expect(() => parseBenchArgs(["--peer-timeout-s", "0"])).toThrow(/--peer-timeout-s 0/);
  });

  it("names every impl alone, deepep-ht-caller on the contiguous points; refuses other names, saying which are known", () => {
    for (const impl of PEER_IMPLS) expect(parsePeers(impl)).toEqual([impl]);
    expect(parsePeers(" deepep-ht-caller , deepep-ll")).toEqual(["deepep-ll", "deepep-ht-caller"]);
    expect(parsePeers("deepep,deepep-ht-caller")).toEqual(["deepep-ll", "deepep-ht", "deepep-ht-caller"]);
    expect(PEER_LAYOUT["deepep-ht-caller"]).toBe("contiguous");
    expect(PEER_LAYOUT["deepep-ht"]).toBe("contiguous");
    expect(PEER_LAYOUT["switchyard-py"]).toBe("masked");
    // Names an object has from its prototype are not aliases.
    for (const name of ["toString", "constructor", "__proto__", "deepep-ht-caller,hasOwnProperty"])
      expect(parsePeers(name), name).toBeNull();
    const usage = () => parseBenchArgs(["--peers", "deepep,deepep-caller"]);
    expect(usage).toThrow(BenchUsageError);
    expect(usage).toThrow(
      "--peers deepep,deepep-caller: expected none or a list of deepep, deepep-ll, deepep-ht, deepep-ht-caller, pplx, switchyard-py",
    );
    expect(parseBenchArgs(["--peers", "deepep-ht-caller"]).peers).toEqual(["deepep-ht-caller"]);
  });

  it("the help says what deepep, deepep-ht-caller and switchyard-py select", () => {
    const help = BENCH_USAGE.slice(BENCH_USAGE.indexOf("--peers"), BENCH_USAGE.indexOf("--python"));
    expect(help).toMatch(/deepep \(= deepep-ll on masked; deepep-ht and deepep-ht-caller on\s+contiguous/);
    expect(help).toMatch(/caller's cast, permute\s+per expert and weighted sum in torch, like for like/);
    expect(help).toMatch(
      /switchyard-py \(masked: this library through its Python package, timed\s+as the peers are\)/,
    );
    expect(help).toMatch(/any\s+of those names alone, or none/);
  });
});

describe("parsePeerLine", () => {
  it("ignores the libraries' own prints and reads every kind of message", () => {
    expect(parsePeerLine("Allocating buffer size: 1908.1 MB ...")).toBeNull();
    expect(parsePeerLine(line({ kind: "start", impl: "pplx", version: null }))).toEqual({
      kind: "start",
      impl: "pplx",
      version: null,
    });
    expect(parsePeerLine(line({ kind: "skip", impl: "pplx", reason: "ImportError: x" }))).toMatchObject({
      reason: "ImportError: x",
    });
    expect(
      parsePeerLine(
        line({ kind: "error", impl: "deepep-ll", layout: null, tokens: null, error: "rank 0 (setup): E" }),
      ),
    ).toMatchObject({ layout: null, tokens: null, error: "rank 0 (setup): E" });
    const p = parsePeerLine(
      line({
        kind: "point",
        impl: "deepep-ll",
        layout: "masked",
        tokens: 1,
        mode: "graph",
        timing: "t",
        notes: ["n"],
        ranks: [rank(0), rank(1)],
      }),
    );
    expect(p).toMatchObject({ kind: "point", tokens: 1, mode: "graph", notes: ["n"] });
  });

  it("refuses a prefixed line that is not a valid message, saying why", () => {
    expect(() => parsePeerLine(`${PEER_PREFIX}{not json`)).toThrow(SyntaxError);
    expect(() => parsePeerLine(line({ kind: "skip", impl: "pplx" }))).toThrow(/skip without a reason/);
    expect(() => parsePeerLine(line({ kind: "nope", impl: "pplx" }))).toThrow(/unknown kind nope/);
    const good = {
      kind: "point",
      impl: "pplx",
      layout: "masked",
      tokens: 8,
      mode: "graph",
      timing: "t",
      notes: [],
    };
    expect(() => parsePeerLine(line({ ...good, ranks: [] }))).toThrow(/bad ranks/);
    expect(() =>
      parsePeerLine(line({ ...good, ranks: [{ ...rank(0), samplesUs: { step: ["1"] } }] })),
    ).toThrow(/bad ranks/);
    expect(() => parsePeerLine(line({ ...good, mode: "replay", ranks: [rank(0)] }))).toThrow(/mode/);
  });
});

describe("a peer's point", () => {
  it("is aggregated like ours, with this library's byte counts for the same routing, its timing and notes", () => {
    const bp = point("masked", 8);
    const routings = [0, 1].map((s) => [0, 1, 2, 3].map((r) => benchRouting(bp.config, 1, s, r)));
    const ranks = [0, 1, 2, 3].map((r) => rank(r));
    const p = peerPoint(bp, "deepep-ll", { mode: "graph", timing: "t", notes: ["n"], ranks }, routings, 350);
    expect(Object.keys(p.phases)).toEqual(PHASES.filter((x) => ["dispatch", "combine", "step"].includes(x)));
    expect(p.phases.dispatch?.median).toBeCloseTo(13.5, 10); // rank 3 is slowest: 13, 14
    const mean =
      [0, 1, 2, 3].reduce((a, r) => a + meanRemoteBytes(bp.config, routings, r).dispatchBytes, 0) / 4;
    expect(p.bytes.dispatch).toBeCloseTo(mean, 6);
    expect(p.sms).toBeNull();
    expect(p.memory.layoutBytes).toBe(0);
    expect(p).toMatchObject({ impl: "deepep-ll", mode: "graph", timing: "t", notes: ["n"] });
    const ht = peerPoint(
      point("contiguous", 512),
      "deepep-ht",
      { mode: "eager", timing: "t", notes: [], ranks: ranks.map((r) => ({ ...r, sms: 24 })) },
      routings,
      350,
    );
    expect(ht.sms).toBe(24);
  });

  it("a skipped one carries its reason prefixed 'skipped: '", () => {
    expect(peerSkipped(point("masked", 1), "pplx", "ImportError: x").errors).toEqual([
      "skipped: ImportError: x",
    ]);
    expect(peerSkipped(point("masked", 1), "pplx", "skipped: y").errors).toEqual(["skipped: y"]);
  });
});
