import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const bin = join(import.meta.dirname, "..", "bin", "switchyard.js");

function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: import.meta.dirname, encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("the switchyard command (bin shim)", () => {
  it("drops Dawn's adapter-limit notices from stderr, keeps every other line, passes the status", () => {
    const r = run(["conformance", "--backend", "./fixtures/noisyModule.mjs", "--only", "session/layout"]);
    expect(r.status).toBe(0);
    expect(r.stderr).not.toContain("artificially reduced");
    expect(r.stderr).toContain("fixture-noisy: a line of its own");
    expect(r.stdout).toMatch(/PASS\s+session\/layout/);
  });

  it("exits 2 on a usage error, as documented", () => {
    const r = run(["conformance", "--only", "no/such"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('"no/such" matches no property');
  });
});
