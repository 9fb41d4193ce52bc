import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";

const pkg = join(import.meta.dirname, "..");
const root = join(pkg, "..", "..");
const self = "packages/cuda/test/docs.test.ts";

/** Every tracked file, relative to the repository root. */
function trackedFiles(): string[] {
  return execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8", maxBuffer: 64 << 20 })
    .split("\0")
    .filter((f) => f !== "" && existsSync(join(root, f)));
}

describe("the CUDA backend's docs", () => {
  it("docs/performance.md is what scripts/performance-page.mjs makes of the bench JSON", () => {
    const page = execFileSync(process.execPath, [join(pkg, "scripts", "performance-page.mjs"), "--stdout"], {
      encoding: "utf8",
    });
    const committed = readFileSync(join(pkg, "docs", "performance.md"), "utf8");
    expect(page, "run: node packages/cuda/scripts/performance-page.mjs").toBe(committed);
  });

  it("the root README's status row for cuda cites the newest record of results/README.md", () => {
    const index = readFileSync(join(pkg, "results", "README.md"), "utf8");
    const records = [...index.matchAll(/^\| \[([0-9]{4}-[0-9]{2}-[0-9]{2}-[^\]]+)\]/gm)].map((m) => m[1]);
    expect(records.length).toBeGreaterThan(0);
    const newest = records[records.length - 1];
    const row = readFileSync(join(root, "README.md"), "utf8")
      .split("\n")
      .find((l) => /^\| cuda\s/.test(l));
    expect(row, "README.md has a status row for cuda").toBeDefined();
    expect(row, `README.md's cuda row should link results/${newest} (the index's last record)`).toContain(
      `packages/cuda/results/${newest}/README.md`,
    );
  });

  it("every relative link in the repository's Markdown resolves to a file", () => {
    const broken: string[] = [];
    for (const file of trackedFiles().filter((f) => f.endsWith(".md"))) {
      const text = readFileSync(join(root, file), "utf8").replace(/^```[\s\S]*?^```/gm, "");
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1].split("#")[0];
        if (target === "" || /^[a-z]+:/i.test(target)) continue;
        if (!existsSync(join(root, dirname(file), decodeURIComponent(target))))
          broken.push(`${file}: ${m[1]}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("no tracked file names an issue number or a path on a particular machine", () => {
    const pattern = /\bissue ?[0-9]|#1[0-9]\b|\/work\/|\/root\//i;
    /** What may stay: the machine paths that raw measurement output recorded (the tools' JSON under results/). */
    const allowedRemoved = (file: string, line: string) => {
      let rest = line;
      if (/^packages\/cuda\/results\/.*\.json$/.test(file)) rest = rest.replace(/\/(work|root)\//g, "");
      return rest;
    };
    const found: string[] = [];
    for (const file of trackedFiles()) {
      if (file === self || file === "package-lock.json") continue;
      const text = readFileSync(join(root, file));
      if (text.includes(0)) continue;
      text
        .toString("utf8")
        .split("\n")
        .forEach((line, i) => {
          if (pattern.test(allowedRemoved(file, line)))
            found.push(`${file}:${i + 1}: ${line.trim().slice(0, 120)}`);
        });
    }
    expect(found).toEqual([]);
  });
});
