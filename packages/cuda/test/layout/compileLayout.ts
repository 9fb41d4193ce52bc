import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { tempDir } from "../../../../test-support/tempDir.js";

const pkg = fileURLToPath(new URL("../../", import.meta.url));

/** The host C compiler to build the layout with: `$CC`, else `cc`, else `gcc`; null when none runs. */
export function findCCompiler(): string | null {
  for (const cc of [process.env.CC, "cc", "gcc"]) {
    if (!cc) continue;
    try {
      execFileSync(cc, ["--version"], { stdio: "ignore" });
      return cc;
    } catch {
      // not there: try the next
    }
  }
  return null;
}

/**
 * Compiles the layout's C files (src/native/layout, host only) with `cc` into `what` in a fresh
 * temporary folder (removed when the calling test finishes): the filter `sy_layout_cli`, or the
 * shared library `libswitchyard_layout.so`.
 * Warnings are errors: the C must stay clean C11.
 */
export function compileLayout(cc: string, what: "cli" | "shared"): string {
  const dir = tempDir("sy-layout-");
  const src = join(pkg, "src/native/layout");
  const files = readdirSync(src)
    .filter((f) => f.endsWith(".c") && (what === "cli" || f !== "layout_cli.c"))
    .map((f) => join(src, f));
  const out = join(dir, what === "cli" ? "sy_layout_cli" : "libswitchyard_layout.so");
  const flags = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-I", join(pkg, "include")];
  const shared = what === "shared" ? ["-shared", "-fPIC", "-fvisibility=hidden"] : [];
  execFileSync(cc, [...flags, ...shared, ...files, "-o", out], { stdio: "pipe" });
  return out;
}
