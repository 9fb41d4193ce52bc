import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";

let cached: number | null = null;

/**
 * GPUs this process may use, without touching CUDA: CUDA_VISIBLE_DEVICES when set, else the
 * driver's /proc entries, else `nvidia-smi -L`; 0 when none answers.
 */
export function visibleGpuCount(env: NodeJS.ProcessEnv = process.env): number {
  if (env === process.env && cached !== null) return cached;
  const n = countGpus(env);
  if (env === process.env) cached = n;
  return n;
}

function countGpus(env: NodeJS.ProcessEnv): number {
  const visible = env.CUDA_VISIBLE_DEVICES;
  if (visible !== undefined) {
    const ids = visible.split(",").filter((s) => s.trim() !== "" && !s.trim().startsWith("-"));
    return ids.length;
  }
  try {
    const n = readdirSync("/proc/driver/nvidia/gpus").length;
    if (n > 0) return n;
  } catch {
    // no driver entries
  }
  try {
    const out = execFileSync("nvidia-smi", ["-L"], {
      encoding: "utf8",
      timeout: 10_000,
      stdio: ["ignore", "pipe", "ignore"],
    });
    return out.split("\n").filter((l) => l.startsWith("GPU ")).length;
  } catch {
    return 0;
  }
}
