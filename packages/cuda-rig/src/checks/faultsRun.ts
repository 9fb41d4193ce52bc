import type { EpConfig, LayoutKind } from "@switchyard/core";
import { cudaBackend } from "../backend.js";
import type { WorkerSetup } from "../launcher.js";
import { backendOptionsFor } from "../options.js";
import { drainPool } from "../pool.js";
import { FAULT_PHASES, type FaultAction, type FaultPhase } from "../worker/hooks.js";
import { type FaultCaseOptions, type FaultOutcome, type RecoveryOutcome, runFaultCase } from "./faults.js";
import { checkedStep } from "./world.js";

export interface FaultsOptions extends Omit<FaultCaseOptions, "recover"> {
  /** Layouts, each with every case (default masked only). */
  layouts?: readonly LayoutKind[];
  phases?: readonly FaultPhase[];
  actions?: readonly FaultAction[];
  recover?: FaultCaseOptions["recover"];
  /** Called after each case (progress). */
  onCase?: (o: FaultOutcome, index: number, total: number) => void;
}

/**
 * After a fault: a session made the way users make one (cudaBackend(options).createSession, a fresh
 * pooled world on the same GPUs, its workers started as `workers` says) runs one step checked bit
 * for bit against core's reference.
 */
export async function recoverWithBackend(
  config: EpConfig,
  seed = 700,
  workers: WorkerSetup = {},
): Promise<RecoveryOutcome> {
  const t0 = Date.now();
  try {
    const session = await cudaBackend(backendOptionsFor(workers)).createSession(config, {
      timeoutMs: 10_000,
    });
    let errors: string[];
    try {
      errors = await checkedStep(session, config, seed);
    } finally {
      await session.destroy();
      await drainPool();
    }
    const detail = errors.length
      ? errors.slice(0, 3).join(" | ")
      : "new session, one step bit-exact with core's reference";
    return { ok: errors.length === 0, detail, elapsedMs: Date.now() - t0 };
  } catch (e) {
    await drainPool().catch(() => {});
    return { ok: false, detail: `${(e as Error).name}: ${(e as Error).message}`, elapsedMs: Date.now() - t0 };
  }
}

/**
 * The rank-failure world: every layout x phase x action (default: masked x 4 phases x kill, stall), the victim
 * rotating over the ranks (rank 1 first), each case in a world of its own followed by a recovery;
 * the fault worlds and the recoveries start their workers as `o.workers` says.
 */
export async function runFaults(o: FaultsOptions): Promise<FaultOutcome[]> {
  if (o.ranks < 2) throw new RangeError(`runFaults: ${o.ranks} ranks; a rank failure needs at least 2`);
  const phases = o.phases ?? FAULT_PHASES;
  const actions = o.actions ?? (["kill", "stall"] as const);
  const layouts = o.layouts ?? (["masked"] as const);
  const cases = layouts.flatMap((layout) =>
    phases.flatMap((phase) => actions.map((action) => ({ layout, phase, action }))),
  );
  const out: FaultOutcome[] = [];
  for (const [i, c] of cases.entries()) {
    const victim = (i + 1) % o.ranks;
    const r = await runFaultCase(c.phase, c.action, victim, {
      ...o,
      layout: c.layout,
      seed: (o.seed ?? 600) + 10 * i,
      recover: o.recover ?? ((config) => recoverWithBackend(config, 700 + i, o.workers)),
    });
    out.push(r);
    o.onCase?.(r, i, cases.length);
  }
  return out;
}

/** One line per case, for the console. */
export function formatFault(o: FaultOutcome): string {
  const worst = Math.max(0, ...o.survivors.map((s) => s.elapsedMs));
  const head = `${o.ok ? "PASS" : "FAIL"} fault: ${o.case} (R${o.ranks}, timeout ${o.timeoutMs} ms)`;
  const body = o.ok
    ? `: ${o.survivors.length} other rank(s) failed in ${o.expectedStage} naming rank ${o.victim} within ${worst} ms; ` +
      `launcher: ${o.victimReport.slice(0, 120)}; recovery ${o.recovery.elapsedMs} ms`
    : `: ${o.problems.slice(0, 4).join(" | ")}`;
  return head + body;
}
