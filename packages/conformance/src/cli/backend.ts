import { type Backend, referenceBackend } from "@switchyard/core";
import { NAMED_BACKENDS, resolveBackend } from "../resolve.js";

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

/**
 * The backend `--backend` names. A project backend (webgpu, cuda) whose package cannot be
 * loaded here comes back unavailable, with the reason; anything else that cannot be loaded
 * throws `BackendLoadError` (an unknown name lists the known ones).
 */
export async function loadBackend(spec: string, cwd: string): Promise<Backend> {
  try {
    return await resolveBackend(spec, cwd);
  } catch (e) {
    if (!Object.hasOwn(NAMED_BACKENDS, spec)) throw e;
    return unloadable(spec, e instanceof Error ? e.message : String(e));
  }
}

/** `backend.unavailableReason()`, with a throw turned into a reason. */
export async function unavailableReason(backend: Backend): Promise<string | null> {
  try {
    return await backend.unavailableReason();
  } catch (e) {
    return `unavailableReason() threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`;
  }
}
