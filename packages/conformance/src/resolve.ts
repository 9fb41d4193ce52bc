import { createRequire } from "node:module";
import { isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { type Backend, referenceBackend } from "@switchyard/core";

/** Thrown when a backend module cannot be loaded or exports no backend. */
export class BackendLoadError extends Error {
  override name = "BackendLoadError";
}

function isBackend(v: unknown): v is Backend {
  const b = v as Backend | null;
  return (
    b !== null &&
    typeof b === "object" &&
    typeof b.name === "string" &&
    typeof b.capabilities === "object" &&
    typeof b.unavailableReason === "function" &&
    typeof b.createSession === "function"
  );
}

/** Whether `spec` names a file (./x, ../x, /x, x.js) rather than a package. */
function looksLikePath(spec: string): boolean {
  return spec.startsWith(".") || isAbsolute(spec) || /\.(c|m)?js$/.test(spec);
}

/**
 * A module specifier for `import()`. Paths become file URLs from `cwd`; a package name is
 * looked up from `cwd` first (the caller's own node_modules, where a vendor installs its
 * backend), then from this package's place (the project's own workspaces).
 */
function specifierOf(spec: string, cwd: string): string {
  if (looksLikePath(spec)) return pathToFileURL(resolve(cwd, spec)).href;
  try {
    return pathToFileURL(createRequire(join(resolve(cwd), "noop.js")).resolve(spec)).href;
  } catch {
    return spec;
  }
}

/**
 * Finds a backend by module: `reference` (core's reference backend), or a module path / package
 * whose export `backend` is a Backend or `createBackend()` returns one (the default export may be
 * either). This package knows no other backend by name: the command line (@switchyard/cli) keeps
 * its own table of the project's backends and passes their names as `knownNames` for messages.
 * Throws `BackendLoadError` saying what to do otherwise.
 */
export async function resolveBackend(
  spec: string,
  cwd = process.cwd(),
  knownNames: readonly string[] = ["reference"],
): Promise<Backend> {
  if (spec === "reference") return referenceBackend;
  const specifier = specifierOf(spec, cwd);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(specifier)) as Record<string, unknown>;
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    const notFound = (e as { code?: string }).code === "ERR_MODULE_NOT_FOUND" && why.includes(`'${spec}'`);
    if (!looksLikePath(spec) && notFound) {
      throw new BackendLoadError(
        `unknown backend "${spec}": the known names are ${knownNames.join(", ")}; otherwise give ` +
          `a module path (./dist/index.js) or an installed package's name, found from ${resolve(cwd)}`,
      );
    }
    throw new BackendLoadError(`cannot import ${specifier}: ${why}`);
  }
  const candidates: [string, unknown][] = [
    ["backend", mod.backend],
    ["createBackend", mod.createBackend],
    ["default", mod.default],
  ];
  for (const [name, value] of candidates) {
    const b = typeof value === "function" ? await (value as () => unknown)() : value;
    if (isBackend(b)) return b;
    if (value !== undefined) {
      throw new BackendLoadError(
        `${specifier} export ${name} is not a Backend (name, capabilities, unavailableReason, createSession)`,
      );
    }
  }
  throw new BackendLoadError(
    `${specifier} has no backend; it should export \`backend\` (a Backend) or \`createBackend()\` (returning one)`,
  );
}
