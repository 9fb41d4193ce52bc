import { describe, expect, it } from "vitest";
import { loadBackend } from "../src/backend.js";
import { NAMED_BACKENDS } from "../src/backends.js";

describe("the named backends table", () => {
  it("names each backend's package; reference needs none loaded", async () => {
    expect(Object.keys(NAMED_BACKENDS)).toEqual(["reference", "webgpu", "cuda"]);
    expect(NAMED_BACKENDS.cuda.package).toBe("@switchyard/cuda-rig");
    expect((await loadBackend("reference", process.cwd())).name).toBe("reference");
  });

  it("cuda:<variant> is a backend of its own name; an unknown variant is a usage error listing the known", async () => {
    expect((await loadBackend("cuda:exact", process.cwd())).name).toBe("cuda:exact");
    const e = await loadBackend("cuda:nope", process.cwd()).catch((x) => x);
    expect(e.name).toBe("UsageError");
    expect(e.message).toMatch(/no variant "nope": the variants are exact/);
    await expect(loadBackend("reference:x", process.cwd())).rejects.toThrow(/no variant "x"/);
  });

  it("the environment reaches the cuda backend only through the command line", async () => {
    process.env.SWITCHYARD_CUDA_RANKS_PER_GPU = "3";
    try {
      const three = (await loadBackend("cuda", process.cwd())).capabilities.maxRanks;
      process.env.SWITCHYARD_CUDA_RANKS_PER_GPU = "1";
      const one = (await loadBackend("cuda", process.cwd())).capabilities.maxRanks;
      expect(three).toBe(one * 3);
    } finally {
      delete process.env.SWITCHYARD_CUDA_RANKS_PER_GPU;
    }
  });
});
