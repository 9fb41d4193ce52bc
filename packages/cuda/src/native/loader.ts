import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { PARAM_NAMES } from "@switchyard/core";
import type { NativeAddon } from "./types.js";

const here = dirname(fileURLToPath(import.meta.url));
/** packages/cuda, from dist/native or src/native. */
export const PACKAGE_DIR = resolve(here, "..", "..");
export const ADDON_FILE = "switchyard_cuda.node";

const BUILD_HINT =
  "run `npm run build:native -w @switchyard/cuda` on a machine with CUDA (nvcc) and NVSHMEM_HOME set";

/** Where the addon may be: SWITCHYARD_CUDA_ADDON, then packages/cuda/build. */
export function addonCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  const out: string[] = [];
  if (env.SWITCHYARD_CUDA_ADDON) out.push(resolve(env.SWITCHYARD_CUDA_ADDON));
  out.push(join(PACKAGE_DIR, "build", ADDON_FILE));
  return out;
}

export type LoadResult = { addon: NativeAddon; path: string; reason: null } | { addon: null; reason: string };

let cached: LoadResult | null = null;

/**
 * Loads the addon once. Never throws: every failure (missing file, dlopen error, parameter order
 * that differs from core's) is collected into one `reason` that says what to do.
 */
export function loadNative(): LoadResult {
  cached ??= tryLoad(addonCandidates());
  return cached;
}

export function tryLoad(candidates: string[]): LoadResult {
  const failures: string[] = [];
  const require = createRequire(import.meta.url);
  for (const path of candidates) {
    if (!existsSync(path)) {
      failures.push(`${path}: not found`);
      continue;
    }
    try {
      const addon = require(path) as NativeAddon;
      const names = addon.paramNames();
      if (names !== PARAM_NAMES.join(",")) {
        failures.push(
          `${path}: built for another parameter block (kernels index [${names}], core has [${PARAM_NAMES.join(",")}]); rebuild it`,
        );
        continue;
      }
      return { addon, path, reason: null };
    } catch (e) {
      failures.push(`${path}: ${(e as Error).message.split("\n")[0]}`);
    }
  }
  const built = failures.some((f) => !f.endsWith("not found"));
  const head = built ? "native addon failed to load" : "native addon not built";
  return {
    addon: null,
    reason: `${head}: ${BUILD_HINT} (and put NVSHMEM's lib folder, e.g. the nvidia-nvshmem-cu13 wheel's, on LD_LIBRARY_PATH). Tried: ${failures.join("; ")}`,
  };
}

/** The addon, or a thrown Error with the collected reason. */
export function requireNative(): NativeAddon {
  const r = loadNative();
  if (r.addon === null) throw new Error(r.reason);
  return r.addon;
}
