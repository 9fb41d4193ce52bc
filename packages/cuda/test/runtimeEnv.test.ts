import { describe, expect, it } from "vitest";
import { runtimeOptionsFromEnv } from "../src/runtimeEnv.js";

describe("runtimeOptionsFromEnv (the library reads no environment itself)", () => {
  it("leaves the library's defaults when nothing is set", () => {
    expect(runtimeOptionsFromEnv({})).toEqual({});
  });

  it("maps each variable to its option, as the library once read them", () => {
    expect(
      runtimeOptionsFromEnv({
        SWITCHYARD_TRANSPORT: "put",
        SWITCHYARD_CUDA_POINTER_CHECKS: "0",
        SWITCHYARD_CONTIGUOUS_BLOCKS: "40",
      }),
    ).toEqual({ transport: "put", pointerChecks: false, contiguousBlocks: 40 });
    expect(
      runtimeOptionsFromEnv({ SWITCHYARD_TRANSPORT: "direct", SWITCHYARD_CUDA_POINTER_CHECKS: "1" }),
    ).toEqual({
      transport: "auto",
      pointerChecks: true,
    });
    expect(runtimeOptionsFromEnv({ SWITCHYARD_CONTIGUOUS_BLOCKS: "-3" })).toEqual({ contiguousBlocks: 0 });
  });

  it("takes the one kernel function a half from SWITCHYARD_CUDA_KERNEL_PER_HALF, 0 or 1 only", () => {
    expect(runtimeOptionsFromEnv({ SWITCHYARD_CUDA_KERNEL_PER_HALF: "1" })).toEqual({ kernelPerHalf: true });
    expect(runtimeOptionsFromEnv({ SWITCHYARD_CUDA_KERNEL_PER_HALF: "0" })).toEqual({ kernelPerHalf: false });
    expect(runtimeOptionsFromEnv({ SWITCHYARD_CUDA_KERNEL_PER_HALF: "" })).toEqual({});
    for (const bad of ["yes", "2", " 1"]) {
      expect(() => runtimeOptionsFromEnv({ SWITCHYARD_CUDA_KERNEL_PER_HALF: bad })).toThrow(
        /SWITCHYARD_CUDA_KERNEL_PER_HALF=.*expected 1 .* or 0/,
      );
    }
  });
});
