/**
 * Where the rendezvous finds the job's shared secret, first match wins. Every rank of one job
 * sees the same value; another job (or a stranger on the network) does not know it, so rank 0
 * serves the NVSHMEM unique id to its own ranks only and the ranks accept an id from their own
 * rank 0 only. SWITCHYARD_JOB_SECRET is the one that is actually secret; the launchers' job ids
 * tell jobs apart but can be guessed by anyone who can list the jobs.
 */
export const SECRET_SOURCES = [
  "SWITCHYARD_JOB_SECRET",
  "TORCHELASTIC_RUN_ID",
  "SLURM_JOB_ID",
  "PMIX_NAMESPACE",
  "OMPI_MCA_ess_base_jobid",
] as const;

export interface JobSecret {
  /** Bytes for the rendezvous (derived from the variable's name and value, and the Slurm step). */
  secret: Uint8Array;
  /** The variable it came from. */
  source: string;
}

/**
 * The job secret from the launcher's environment, or null when none is set. torchrun's
 * TORCHELASTIC_RUN_ID "none" (no --rdzv-id) is no identity and is skipped.
 */
export function jobSecretFromEnv(env: NodeJS.ProcessEnv): JobSecret | null {
  for (const name of SECRET_SOURCES) {
    const v = env[name];
    if (v === undefined || v.trim() === "" || (name === "TORCHELASTIC_RUN_ID" && v === "none")) continue;
    const step = name === "SLURM_JOB_ID" && env.SLURM_STEP_ID !== undefined ? `.${env.SLURM_STEP_ID}` : "";
    return { secret: new TextEncoder().encode(`${name}=${v}${step}`), source: name };
  }
  return null;
}
