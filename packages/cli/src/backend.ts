import { resolveBackend } from "@switchyard/conformance";
import { type Backend, referenceBackend } from "@switchyard/core";
import { NAMED_BACKENDS } from "./backends.js";

/** A stand-in for a named backend whose package cannot be loaded: unavailable, with the reason. */
function unloadable(name: string, reason: string): Backend {
  return {
    name,
    capabilities: referenceBackend.capabilities,
    unavailableReason: async () => reason,
    createSession: async () => {
      throw new Error(reason);
    },
  };
}

/** `name` and `variant` of `--backend name:variant` when `name` is one of NAMED_BACKENDS. */
function named(spec: string): { name: string; variant: string | undefined } | null {
  const colon = spec.indexOf(":");
  const name = colon < 0 ? spec : spec.slice(0, colon);
  if (!Object.hasOwn(NAMED_BACKENDS, name)) return null;
  return { name, variant: colon < 0 ? undefined : spec.slice(colon + 1) };
}

/**
 * The backend `--backend` names: a name of NAMED_BACKENDS (with an optional `:variant`), or a
 * module path / package for conformance's `resolveBackend`. A named backend whose package cannot
 * be loaded here comes back unavailable, with the reason; an unknown variant is a usage error;
 * anything else that cannot be loaded throws `BackendLoadError` (an unknown name lists the known
 * ones).
 */
export async function loadBackend(spec: string, cwd: string): Promise<Backend> {
  const n = named(spec);
  if (n === null) return await resolveBackend(spec, cwd, Object.keys(NAMED_BACKENDS));
  const entry = NAMED_BACKENDS[n.name];
  let backend: Backend;
  try {
    backend = await entry.load(n.variant);
  } catch (e) {
    if (e instanceof Error && e.name === "UsageError") throw e;
    const why = e instanceof Error ? e.message : String(e);
    return unloadable(
      spec,
      `cannot load ${entry.package}: ${why}; build it first (npm run build) and check that it is installed`,
    );
  }
  return backend;
}

/** `backend.unavailableReason()`, with a throw turned into a reason. */
export async function unavailableReason(backend: Backend): Promise<string | null> {
  try {
    return await backend.unavailableReason();
  } catch (e) {
    return `unavailableReason() threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`;
  }
}
