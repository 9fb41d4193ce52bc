import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../../test-support/tempDir.js";
import { findCCompiler } from "./layout/compileLayout.js";

const pkg = fileURLToPath(new URL("../", import.meta.url));

/** The host C++ compiler: `$CXX`, else `c++`, else `g++`; null when none runs. */
function findCxx(): string | null {
  for (const cxx of [process.env.CXX, "c++", "g++"]) {
    if (!cxx) continue;
    try {
      execFileSync(cxx, ["--version"], { stdio: "ignore" });
      return cxx;
    } catch {
      // not there: try the next
    }
  }
  return null;
}

const cc = findCCompiler();
const cxx = findCxx();
const skip = cc === null || cxx === null ? "no host C and C++ compiler ($CC / $CXX, cc / c++)" : null;

/** Builds one host-only test program of test/native/host with the sources it tests; returns its path. */
function build(test: string, sources: string[]): string {
  const dir = tempDir("sy-host-");
  const layout = join(pkg, "src/native/layout");
  const objects = readdirSync(layout)
    .filter((f) => f.endsWith(".c") && f !== "layout_cli.c")
    .map((f) => {
      const out = join(dir, `${f}.o`);
      execFileSync(cc as string, [
        "-std=c11",
        "-O1",
        "-c",
        "-I",
        join(pkg, "include"),
        join(layout, f),
        "-o",
        out,
      ]);
      return out;
    });
  const out = join(dir, test);
  const flags = [
    "-std=c++17",
    "-O1",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-pthread",
    "-D__host__=",
    "-D__device__=",
  ];
  const files = [
    ...sources.map((s) => join(pkg, "src/native/host", s)),
    join(pkg, "test/native/host", `${test}.cc`),
  ];
  execFileSync(cxx as string, [...flags, "-I", join(pkg, "include"), ...files, ...objects, "-o", out], {
    stdio: "pipe",
  });
  return out;
}

describe.skipIf(skip !== null)(
  `host-only checks of the C library${skip ? ` (skipped: ${skip})` : ""}`,
  () => {
    it("handle table: stale handles refused, destroy waits for calls in flight", () => {
      const out = execFileSync(build("handles_test", ["handles.cc"]), { encoding: "utf8", timeout: 60_000 });
      expect(out).toContain("0 failure(s)");
    }, 120_000);

    it("parameter validation: only the layout's own block is accepted", () => {
      const out = execFileSync(build("params_check_test", ["params_check.cc"]), {
        encoding: "utf8",
        timeout: 60_000,
      });
      expect(out).toContain("0 failure(s)");
    }, 120_000);

    it("region heaps: the kernels' isLocalRegion agrees with the layout core's REGION_TABLE generates", () => {
      const out = execFileSync(build("region_heaps_test", ["params_check.cc"]), {
        encoding: "utf8",
        timeout: 60_000,
      });
      expect(out).toContain(" 0 failure(s)");
    }, 120_000);
  },
);
