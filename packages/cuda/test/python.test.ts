import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../../test-support/tempDir.js";

const pythonDir = join(dirname(fileURLToPath(import.meta.url)), "..", "python");

/** Where pytest is looked for, in order: python3 on PATH (a pyenv or venv one included), then the
 * system's, where scripts/setup-python.sh installs Debian's python3-pytest. */
const CANDIDATES = ["python3", "/usr/bin/python3"];

/** The first candidate that imports pytest, or what each one said. */
function findPython(): { python: string } | { tried: string[] } {
  const tried: string[] = [];
  for (const python of CANDIDATES) {
    const probe = spawnSync(python, ["-c", "import pytest"], { encoding: "utf8" });
    if (probe.status === 0) return { python };
    tried.push(`${python}: ${probe.error ? "not installed" : "no pytest"}`);
  }
  return { tried };
}

describe("the Python package (pytest: ctypes mirrors against the headers, layout through the C layout library, error mapping)", () => {
  it("runs its tests (a missing pytest fails: a skip would hide them)", () => {
    const found = findPython();
    if (!("python" in found)) {
      throw new Error(
        `no python3 with pytest (${found.tried.join("; ")}): run \`bash scripts/setup.sh\` (as root it installs ` +
          "Debian's python3-pytest) or `python3 -m pip install pytest`",
      );
    }
    // pytest's temporary folders under one of the test's own (removed after it), not pytest-of-<user>.
    const basetemp = join(tempDir("sy-pytest-"), "basetemp");
    const args = ["-q", "-rs", "-p", "no:cacheprovider", `--basetemp=${basetemp}`, "tests"];
    const run = spawnSync(found.python, ["-m", "pytest", ...args], {
      cwd: pythonDir,
      encoding: "utf8",
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
    });
    expect(run.status, `${found.python}:\n${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/\d+ passed/);
    expect(run.stdout).not.toMatch(/\d+ failed|\d+ errors?\b/);
  }, 120_000);
});
