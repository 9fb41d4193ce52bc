import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const pkg = join(import.meta.dirname, "..");
const root = join(pkg, "..", "..");
const results = "packages/cuda/results/";

/**
 * What a record folder may hold besides README.md, *.json and *.svg: path (relative to results/) and the
 * reason. Keep it empty unless a file truly cannot be a README quote, a JSON or a plot.
 */
const exceptions: ReadonlyArray<{ path: string; reason: string }> = [];

/** Files under results/, tracked or new (not ignored), relative to results/. */
function resultFiles(): string[] {
  return execFileSync(
    "git",
    ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", results],
    {
      cwd: root,
      encoding: "utf8",
      maxBuffer: 64 << 20,
    },
  )
    .split("\0")
    .filter((f) => f !== "" && existsSync(join(root, f)))
    .map((f) => f.slice(results.length));
}

/** A record's kinds of file: its README, JSON (measurements, Vega-Lite specs), SVG plots. */
const recordKind = /(^|\/)README\.md$|\.json$|\.svg$/;

describe("results/ holds records, not diaries", () => {
  const files = resultFiles();

  it("finds the records", () => {
    expect(
      files.filter((f) => /^[0-9]{4}-[0-9]{2}-[0-9]{2}-[^/]+\/README\.md$/.test(f)).length,
    ).toBeGreaterThan(0);
  });

  it("results/ itself holds only the index and dated record folders", () => {
    const bad = files.filter((f) => {
      const [top, ...rest] = f.split("/");
      if (rest.length === 0) return f !== "README.md";
      return !/^[0-9]{4}-[0-9]{2}-[0-9]{2}-[a-z0-9-]+$/.test(top);
    });
    expect(bad, "results/ takes README.md and <date>-<purpose>/ folders only").toEqual([]);
  });

  it("a record folder (and any folder inside it) holds only README.md, *.json and *.svg", () => {
    const allowed = new Set(exceptions.map((e) => e.path));
    const bad = files.filter((f) => f.includes("/") && !recordKind.test(f) && !allowed.has(f));
    expect(
      bad,
      "logs and text dumps go: quote the decisive lines in the README or fold them into a JSON; tools move to bench/",
    ).toEqual([]);
  });

  it("every exception still exists and says why", () => {
    for (const e of exceptions) {
      expect(files, `exception ${e.path} no longer exists: drop it`).toContain(e.path);
      expect(e.reason.length, `exception ${e.path} needs a reason`).toBeGreaterThan(10);
    }
  });

  it("every record folder has a README.md and a row in results/README.md", () => {
    const records = [...new Set(files.filter((f) => f.includes("/")).map((f) => f.split("/")[0]))];
    const index = readFileSync(join(pkg, "results", "README.md"), "utf8");
    const missingReadme = records.filter((r) => !files.includes(`${r}/README.md`));
    const unlisted = records.filter((r) => !index.includes(`](${r}/README.md)`));
    expect({ missingReadme, unlisted }).toEqual({ missingReadme: [], unlisted: [] });
  });

  it("every JSON file in a record parses", () => {
    const bad: string[] = [];
    for (const f of files.filter((x) => x.endsWith(".json"))) {
      try {
        JSON.parse(readFileSync(join(pkg, "results", f), "utf8"));
      } catch {
        bad.push(f);
      }
    }
    expect(bad).toEqual([]);
  });
});
