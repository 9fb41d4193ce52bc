/**
 * Fault injection for the rank-failure world (checks/faults.ts): a worker started with
 * SWITCHYARD_TEST_HOOKS=1 accepts a fault plan (op `hook`) and, when it is the plan's victim,
 * dies (SIGKILL) or stalls (answers nothing for `stallMs`, then an error) in the middle of the
 * planned phase: before a send phase writes anything, after a receive phase's kernel is enqueued.
 * Without the variable the op is refused, so production workers cannot be told to die.
 */
export const HOOKS_ENV = "SWITCHYARD_TEST_HOOKS";

export const FAULT_PHASES = ["dispatchSend", "dispatchRecv", "combineSend", "combineRecv"] as const;
export type FaultPhase = (typeof FAULT_PHASES)[number];
export type FaultAction = "kill" | "stall";

export interface FaultPlan {
  victim: number;
  phase: FaultPhase;
  action: FaultAction;
  /** How long a stalled victim stays silent (past the peers' timeout). */
  stallMs: number;
}

export function hooksEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[HOOKS_ENV] === "1";
}

export class TestHooks {
  private plan: FaultPlan | null = null;

  constructor(
    private readonly rank: number,
    private readonly enabled: boolean,
    private readonly kill: () => void = () => process.kill(process.pid, "SIGKILL"),
  ) {}

  /** Arms `plan` (every rank gets it; only the victim acts on it, once). */
  arm(plan: FaultPlan): void {
    if (!this.enabled) throw new Error(`worker: test hooks are off; start the workers with ${HOOKS_ENV}=1`);
    if (!FAULT_PHASES.includes(plan.phase)) throw new Error(`worker: hook: unknown phase ${plan.phase}`);
    if (plan.action !== "kill" && plan.action !== "stall")
      throw new Error(`worker: hook: unknown action ${plan.action}`);
    if (!(plan.stallMs >= 0)) throw new Error(`worker: hook: stallMs ${plan.stallMs}`);
    this.plan = { ...plan };
  }

  /** The armed fault, if this rank is its victim and `phase` its phase: never returns normally. */
  async fire(phase: FaultPhase): Promise<void> {
    const p = this.plan;
    if (p === null || p.victim !== this.rank || p.phase !== phase) return;
    this.plan = null;
    if (p.action === "kill") {
      this.kill();
      await new Promise(() => {}); // the signal ends the process; nothing may run after it
    }
    await new Promise((r) => setTimeout(r, p.stallMs));
    throw new Error(`test hook: rank ${this.rank} stalled in ${phase} for ${p.stallMs} ms`);
  }
}
