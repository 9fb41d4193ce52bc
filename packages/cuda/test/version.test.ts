import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../../test-support/tempDir.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const script = join(root, "scripts", "version.mjs");

/** Every file the version check reads, copied into a fresh folder laid out as the repository. */
function copyOfRepository(): string {
  const dir = tempDir("sy-version-");
  const files = [
    "VERSION",
    "package-lock.json",
    "templates/backend/package.json",
    "docs/depending.md",
    "packages/cuda/CMakeLists.txt",
    "packages/cuda/src/native/host/c_api.cc",
    "packages/cuda/python/pyproject.toml",
    ...readdirSync(join(root, "packages")).map((p) => `packages/${p}/package.json`),
  ];
  for (const f of files) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    copyFileSync(join(root, f), join(dir, f));
  }
  return dir;
}

function check(at: string) {
  return spawnSync(process.execPath, [script, "--root", at], { encoding: "utf8" });
}

function edit(file: string, from: RegExp | string, to: string) {
  const before = readFileSync(file, "utf8");
  const after = before.replace(from, to);
  expect(after, `${file}: nothing to replace`).not.toBe(before);
  writeFileSync(file, after);
}

describe("one version (VERSION at the root; scripts/version.mjs)", () => {
  it("every package.json, the lockfile, CMake, sy_version and pyproject agree with VERSION", () => {
    const r = check(root);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const v = readFileSync(join(root, "VERSION"), "utf8").trim();
    expect(r.stdout).toContain(`version: ${v} everywhere`);
  });

  const breaks: [string, string, RegExp | string, string, string][] = [
    [
      "a package.json's version",
      "packages/core/package.json",
      /"version": "[^"]+"/,
      '"version": "9.9.9"',
      "9.9.9",
    ],
    [
      "an internal range",
      "packages/cli/package.json",
      /"@switchyard\/core": "[^"]+"/,
      '"@switchyard/core": "0.1.0"',
      "0.1.0",
    ],
    [
      "the lockfile",
      "package-lock.json",
      /("packages\/cuda": \{\s*"name": "[^"]+",\s*"version": )"[^"]+"/,
      '$1"0.5.0"',
      "npm install",
    ],
    [
      "CMake's literal version",
      "packages/cuda/CMakeLists.txt",
      /VERSION \$\{SY_VERSION\}/,
      "VERSION 0.5.0",
      "project()",
    ],
    [
      "sy_version's literal",
      "packages/cuda/src/native/host/c_api.cc",
      '"switchyard-cuda " SY_VERSION',
      '"switchyard-cuda 0.6.0"',
      "sy_version",
    ],
    [
      "pyproject's static version",
      "packages/cuda/python/pyproject.toml",
      'dynamic = ["version"]',
      'version = "0.5.0"',
      "dynamic",
    ],
  ];
  for (const [what, file, from, to, said] of breaks) {
    it(`fails naming ${file} when ${what} disagrees`, () => {
      const dir = copyOfRepository();
      expect(check(dir).status).toBe(0);
      edit(join(dir, file), from, to);
      const r = check(dir);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(file);
      expect(r.stderr).toContain(said);
    });
  }

  it("--write brings every package.json back to VERSION", () => {
    const dir = copyOfRepository();
    writeFileSync(join(dir, "VERSION"), "1.2.3\n");
    const w = spawnSync(process.execPath, [script, "--root", dir, "--write"], { encoding: "utf8" });
    // The lockfile is npm install's to update: the only places left behind.
    expect(w.status).toBe(1);
    const left = w.stderr.split("\n").filter((l) => l.startsWith("  "));
    expect(left.length).toBeGreaterThan(0);
    expect(left.filter((l) => !l.startsWith("  package-lock.json"))).toEqual([]);
    const cli = JSON.parse(readFileSync(join(dir, "packages/cli/package.json"), "utf8"));
    expect(cli.version).toBe("1.2.3");
    expect(cli.dependencies["@switchyard/core"]).toBe("1.2.3");
  });
});
