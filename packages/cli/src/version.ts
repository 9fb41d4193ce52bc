import { readFileSync } from "node:fs";

/** This package's version, from its package.json (one folder up from src or dist). */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
}
