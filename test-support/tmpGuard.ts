/**
 * Vitest global setup: the package's tests run with TMPDIR set to a fresh folder (workers and the
 * processes they start inherit it), and the run fails when anything is left in it afterwards,
 * naming what. The folder itself is removed either way, so a run leaves nothing behind.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function setup(): () => void {
  const previous = process.env.TMPDIR;
  const dir = mkdtempSync(join(tmpdir(), "sy-vitest-"));
  process.env.TMPDIR = dir;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    const left = readdirSync(dir).sort();
    rmSync(dir, { recursive: true, force: true });
    if (left.length > 0)
      throw new Error(
        `the tests left ${left.length === 1 ? "an entry" : `${left.length} entries`} in their temporary folder (each test removes what it makes): ${left.join(", ")}`,
      );
  };
}
