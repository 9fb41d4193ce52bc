import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

// scripts/pack-out.sh, device-run.sh's `pack` step, on made-up output folders: what stays beside
// the archive, what goes into it, the step folders a call did or did not make, a second pack.
const script = join(import.meta.dirname, "..", "scripts", "pack-out.sh");
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function folder(files: string[]) {
  const d = mkdtempSync(join(tmpdir(), "pack-out-"));
  dirs.push(d);
  for (const f of files) {
    mkdirSync(join(d, f, ".."), { recursive: true });
    writeFileSync(join(d, f), f);
  }
  return d;
}
const pack = (d: string) => spawnSync("bash", [script, d], { encoding: "utf8" });
const archived = (d: string) =>
  execFileSync("tar", ["tzf", join(d, "logs.tgz")], { encoding: "utf8" })
    .split("\n")
    .filter((f) => f !== "" && !f.endsWith("/"))
    .map((f) => f.replace(/^\.\//, ""))
    .sort();

describe("scripts/pack-out.sh", () => {
  it("keeps the summary and the bench's JSON and SVG beside one archive of the logs, JSON and step folders", () => {
    const d = folder([
      "build.log",
      "checks-2gpu.json",
      "bench-2gpu.json",
      "bench-2gpu.svg",
      "summary.txt",
      "compare-head-1.svg",
      "rounds/compare-peers-1.json",
      "one-gpu-ranks1/compare-base-1.json",
    ]);
    const out = pack(d);
    expect(out.status, out.stderr).toBe(0);
    expect(readdirSync(d).sort()).toEqual(["bench-2gpu.json", "bench-2gpu.svg", "logs.tgz", "summary.txt"]);
    expect(archived(d)).toEqual([
      "bench-2gpu.json",
      "build.log",
      "checks-2gpu.json",
      "one-gpu-ranks1/compare-base-1.json",
      "rounds/compare-peers-1.json",
    ]);
  });

  it("packs a call that made none of the step folders, or no JSON at the top", () => {
    const d = folder(["build.log", "first-steps.json", "summary.txt"]);
    expect(pack(d).status).toBe(0);
    expect(archived(d)).toEqual(["build.log", "first-steps.json"]);
    const logsOnly = folder(["build.log", "one-gpu-ranks1/compare-head-1.json", "summary.txt"]);
    expect(pack(logsOnly).status).toBe(0);
    expect(archived(logsOnly)).toEqual(["build.log", "one-gpu-ranks1/compare-head-1.json"]);
  });

  it("a second pack keeps the first archive's files and adds the new ones", () => {
    const d = folder(["build.log", "summary.txt"]);
    expect(pack(d).status).toBe(0);
    writeFileSync(join(d, "faults-2gpu.log"), "later");
    expect(pack(d).status).toBe(0);
    expect(archived(d)).toEqual(["build.log", "faults-2gpu.log"]);
  });

  it("leaves an empty folder alone and refuses a missing one", () => {
    const empty = folder([]);
    expect(pack(empty).status).toBe(0);
    expect(readdirSync(empty)).toEqual([]);
    const missing = pack(join(empty, "nowhere"));
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain("usage: pack-out.sh");
  });
});
