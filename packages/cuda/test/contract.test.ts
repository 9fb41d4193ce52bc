import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CONTRACT_COMMAND, CONTRACT_FILES, LAYOUT_REGIONS_PATH } from "@switchyard/core";
import { describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

describe("the files generated from core's contract", () => {
  it("covers the C layout's table of regions", () => {
    expect(CONTRACT_FILES.map((f) => f.path)).toContain(LAYOUT_REGIONS_PATH);
  });

  it.each(CONTRACT_FILES.map((f) => [f.path, f.render] as const))(
    "%s is what core's contract generates now (else run the command it names)",
    (path, render) => {
      const committed = readFileSync(join(root, path), "utf8");
      const fresh = render();
      expect(committed.includes("do not edit") && committed.includes(CONTRACT_COMMAND)).toBe(true);
      if (committed !== fresh) {
        throw new Error(
          `${path} is stale: core's contract changed; run \`${CONTRACT_COMMAND}\` after building core`,
        );
      }
    },
  );

  it("is the only copy: the headers, params.cuh and the C tables take their names from it", () => {
    const read = (p: string) => readFileSync(join(root, "packages/cuda", p), "utf8");
    expect(read("include/switchyard_cuda.h")).toContain('#include "switchyard_contract.h"');
    for (const p of ["src/native/kernels/params.cuh", "src/native/layout/layout_names.c"]) {
      expect(read(p)).not.toMatch(/"dispatchSignal"|"recvMeta\.bytes"/);
    }
    for (const p of ["src/native/host/endpoint.cc", "src/native/host/c_api.cc"]) {
      expect(read(p)).not.toMatch(/"dispatchSignal"|"SY_ERR_TIMEOUT"|"combine recv"/);
    }
    // The C layout places regions from the generated table alone: no region, shape or axis by hand.
    const layoutC = read("src/native/layout/layout.c");
    expect(layoutC).toContain('#include "layout_regions.gen.h"');
    expect(layoutC).not.toMatch(/SY_REGION_(DISPATCH|COUNT_SIGNAL|COMBINE|RECV)|"srcRank"|"hidden"/);
    expect(read("python/switchyard_cuda/errors.py")).not.toMatch(
      /"SY_ERR_TIMEOUT"|"dispatchSignal"|"combine recv"/,
    );
  });
});
