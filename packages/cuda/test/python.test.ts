import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../../test-support/tempDir.js";

const pythonDir = join(dirname(fileURLToPath(import.meta.url)), "..", "python");

/** Why the Python package's tests cannot run here, or null: they need python3 with pytest. */
function skipReason(): string | null {
  const probe = spawnSync("python3", ["-c", "import pytest"], { encoding: "utf8" });
  if (probe.error) return "python3 is not installed";
  if (probe.status !== 0) return "python3 has no pytest (pip install pytest)";
  return null;
}

const reason = skipReason();

describe("the Python package (pytest: config and layout through the C layout library, error mapping)", () => {
  it.skipIf(reason !== null)(
    `runs its tests${reason ? ` (skipped: ${reason})` : ""}`,
    () => {
      // pytest's temporary folders under one of the test's own (removed after it), not pytest-of-<user>.
      const basetemp = join(tempDir("sy-pytest-"), "basetemp");
      const args = ["-q", "-rs", "-p", "no:cacheprovider", `--basetemp=${basetemp}`, "tests"];
      const run = spawnSync("python3", ["-m", "pytest", ...args], {
        cwd: pythonDir,
        encoding: "utf8",
        env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
      });
      expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(run.stdout).toMatch(/\d+ passed/);
    },
    120_000,
  );
});
