import type { ConformanceProperty } from "./property.js";

function matches(name: string, pattern: string): boolean {
  if (pattern.includes("*")) {
    const re = new RegExp(
      `^${pattern
        .split("*")
        .map((p) => p.replace(/[.+?^${}()|[\]\\/]/g, "\\$&"))
        .join(".*")}$`,
    );
    return re.test(name);
  }
  return name === pattern || name.startsWith(`${pattern.replace(/\/$/, "")}/`);
}

/**
 * The properties `only` selects (all when absent): exact names, prefixes at a `/` boundary
 * ("dispatch" selects dispatch/rows, dispatch/layout/masked, ...), or globs with `*`.
 * Throws a TypeError for a pattern that selects nothing.
 */
export function selectProperties(
  all: readonly ConformanceProperty[],
  only: string | readonly string[] | undefined,
): ConformanceProperty[] {
  if (only === undefined) return [...all];
  const patterns = (typeof only === "string" ? [only] : only)
    .flatMap((p) => p.split(","))
    .map((p) => p.trim());
  for (const p of patterns) {
    if (!all.some((prop) => matches(prop.name, p))) {
      throw new TypeError(
        `selectProperties: "${p}" matches no property; the properties are: ${all.map((x) => x.name).join(", ")}`,
      );
    }
  }
  return all.filter((prop) => patterns.some((p) => matches(prop.name, p)));
}
