import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// scripts/build-native.sh asked to build where it cannot: it must fail and say what to set, never pass
// quietly; only a caller that passes --if-available gets a "skipped" exit 0. NVSHMEM_HOME always
// points nowhere here, so nothing is ever built.
const script = fileURLToPath(new URL("../scripts/build-native.sh", import.meta.url));

function buildNative(env: Record<string, string | undefined>, args: string[] = []) {
  const { NVSHMEM_HOME: _, ...rest } = process.env;
  const r = spawnSync("bash", [script, ...args], { env: { ...rest, ...env }, encoding: "utf8" });
  return { status: r.status, out: r.stdout + r.stderr };
}

// PATH without the folders that hold nvcc, where bash and dirname (the script's only tools before it
// checks) are still found; null when they share a folder with nvcc.
const dirs = (process.env.PATH ?? "").split(delimiter).filter((d) => d !== "");
const noNvccPath = dirs.filter((d) => !existsSync(join(d, "nvcc")));
const noNvcc = ["bash", "dirname"].every((t) => noNvccPath.some((d) => existsSync(join(d, t))))
  ? noNvccPath.join(delimiter)
  : null;

describe("build:native where it cannot build", () => {
  it("fails without NVSHMEM_HOME, naming it and where NVSHMEM comes from", () => {
    const r = buildNative({});
    expect(r.status).toBe(1);
    expect(r.out).toContain("build:native failed");
    expect(r.out).toContain("NVSHMEM_HOME is not set");
    expect(r.out).toContain("nvidia-nvshmem-cu13");
    expect(r.out).not.toContain("skipped");
  });

  it("fails with an NVSHMEM_HOME that has no nvshmem.h", () => {
    const r = buildNative({ NVSHMEM_HOME: "/nonexistent/nvshmem" });
    expect(r.status).toBe(1);
    expect(r.out).toContain("NVSHMEM_HOME=/nonexistent/nvshmem has no include/nvshmem.h");
  });

  it.skipIf(noNvcc === null)("fails without nvcc, naming it", () => {
    const r = buildNative({ PATH: noNvcc as string, NVSHMEM_HOME: "/nonexistent/nvshmem" });
    expect(r.status).toBe(1);
    expect(r.out).toContain("nvcc (CUDA) is not on PATH");
  });

  it("with --if-available says it skipped and why, and exits 0", () => {
    const r = buildNative({ NVSHMEM_HOME: "/nonexistent/nvshmem" }, ["--if-available"]);
    expect(r.status).toBe(0);
    expect(r.out).toMatch(
      /^build:native skipped: .*NVSHMEM_HOME=\/nonexistent\/nvshmem has no include\/nvshmem\.h/m,
    );
  });

  it("refuses an unknown argument", () => {
    const r = buildNative({}, ["--if-avialable"]);
    expect(r.status).toBe(2);
    expect(r.out).toContain("unknown argument --if-avialable");
  });
});
