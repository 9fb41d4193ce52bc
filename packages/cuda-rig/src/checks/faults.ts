import { defineConfig, type EpConfig, type LayoutKind } from "@switchyard/core";
import { endpointLayout } from "@switchyard/cuda";
import { WorkerGroup, type WorkerSetup } from "../launcher.js";
import { heapSizeFor } from "../pool.js";
import { type FaultAction, type FaultPhase, type FaultPlan, HOOKS_ENV } from "../worker/hooks.js";
import { expertOutputsAny } from "./contiguous.js";
import { makeInputs } from "./step.js";
import { checkedStep, World } from "./world.js";

/**
 * Where the other ranks notice a victim that died or stalled in `phase` (step 1 of the world):
 * - dispatch send (before its rows went out): their dispatch recv, same step;
 * - dispatch recv (its rows went out, it never combines): their combine recv, same step;
 * - combine send (before its rows went back): their combine recv, same step;
 * - combine recv (it returned every row, then stopped): the step completes; their next
 *   dispatch recv (step 2) waits for rows that never come.
 * Contiguous: a send waits on the device for every rank's counts first, so the victim's missing
 * dispatch send (step 1, or step 2 after combine recv) is found by the others' own dispatch send,
 * stage "dispatch send", reported at their dispatch recv.
 */
export function expectedFailure(
  phase: FaultPhase,
  layout: LayoutKind = "masked",
): { step: number; call: FaultPhase; stage: string } {
  switch (phase) {
    case "dispatchSend":
      // contiguous: their own dispatch send waits for the victim's counts (reported at dispatch recv)
      return {
        step: 1,
        call: "dispatchRecv",
        stage: layout === "contiguous" ? "dispatch send" : "dispatch recv",
      };
    case "dispatchRecv":
    case "combineSend":
      return { step: 1, call: "combineRecv", stage: "combine recv" };
    case "combineRecv": // contiguous: their step-2 dispatch send waits for the victim's counts
      return {
        step: 2,
        call: "dispatchRecv",
        stage: layout === "contiguous" ? "dispatch send" : "dispatch recv",
      };
  }
}

/** The fault world's config: small, every rank hosts experts of every step; contiguous blocks padded to 4. */
export function faultConfig(ranks: number, layout: LayoutKind = "masked"): EpConfig {
  return defineConfig({
    ranks,
    experts: 4 * ranks,
    topK: 3,
    hidden: 256,
    maxTokensPerRank: 16,
    layout,
    ...(layout === "contiguous" ? { expertAlignment: 4 } : {}),
  });
}

export interface SurvivorOutcome {
  rank: number;
  ok: boolean;
  /** The error it failed with (name: message), or what went wrong instead. */
  detail: string;
  /** From the start of its failing call to the error. */
  elapsedMs: number;
}

export interface RecoveryOutcome {
  ok: boolean;
  detail: string;
  elapsedMs: number;
}

export interface FaultOutcome {
  case: string;
  layout: LayoutKind;
  phase: FaultPhase;
  action: FaultAction;
  victim: number;
  ranks: number;
  timeoutMs: number;
  ok: boolean;
  problems: string[];
  expectedStage: string;
  survivors: SurvivorOutcome[];
  /** kill: the launcher's exit reason for the victim; stall: the victim's late answer. */
  victimReport: string;
  recovery: RecoveryOutcome;
  wallMs: number;
}

export interface FaultCaseOptions {
  ranks: number;
  /** The fault world's layout (default masked). */
  layout?: LayoutKind;
  /** The receive stages' timeout in the fault world. */
  timeoutMs: number;
  /** A stalled victim's silence (default 3 x timeoutMs). */
  stallMs?: number;
  /** How far past timeoutMs a survivor's error may come (IPC, launch of the kernel; default 3 s). */
  slackMs?: number;
  seed?: number;
  /** How the fault world's workers start (ranks per GPU, runtime options), unless `launch` is given. */
  workers?: WorkerSetup;
  /**
   * Starts the world (default: real workers started as `workers` says, with the hooks on, a dead
   * worker not failing the rest).
   */
  launch?: (ranks: number, env: Record<string, string>) => Promise<WorkerGroup>;
  /** A new session on the same GPUs, one step checked against core's reference. */
  recover: (config: EpConfig) => Promise<RecoveryOutcome>;
  /** Compare completed steps with core's reference (default true; stand-in workers return nothing real). */
  verify?: boolean;
}

const CALLS: FaultPhase[] = ["dispatchSend", "dispatchRecv", "combineSend", "combineRecv"];

function describeError(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

/**
 * One case of the rank-failure world: `ranks` workers (hooks on), a checked step 0, then in step 1
 * the victim dies (SIGKILL) or stalls in the middle of `phase` while the others carry on. Every
 * other rank must fail where `expectedFailure` says, with TimeoutError(itself, victim, stage)
 * within timeoutMs (+ slack); the launcher must report the victim's exit (kill) or its late
 * answer (stall); after the world is closed, `recover` must run a correct step on the same GPUs.
 */
export async function runFaultCase(
  phase: FaultPhase,
  action: FaultAction,
  victim: number,
  o: FaultCaseOptions,
): Promise<FaultOutcome> {
  const t0 = Date.now();
  const layout = o.layout ?? "masked";
  const config = faultConfig(o.ranks, layout);
  const T = config.maxTokensPerRank;
  const seed = o.seed ?? 600;
  const verify = o.verify ?? true;
  const stallMs = o.stallMs ?? 3 * o.timeoutMs;
  const slackMs = o.slackMs ?? 3000;
  const expected = expectedFailure(phase, layout);
  const problems: string[] = [];
  const survivors: SurvivorOutcome[] = [];
  let victimReport = "";
  const env = {
    [HOOKS_ENV]: "1",
    NVSHMEM_SYMMETRIC_SIZE: String(heapSizeFor(endpointLayout(config).symmetricBytes)),
  };
  const launch =
    o.launch ?? ((ranks, e) => WorkerGroup.launch({ ...o.workers, ranks, env: e, failFast: false }));
  const group = await launch(o.ranks, env);
  try {
    const world = await World.open(group, config, o.timeoutMs);
    const step0 = await checkedStep(world, config, seed, { verify });
    if (step0.length) problems.push(`step 0 (before the fault): ${step0.slice(0, 3).join(" | ")}`);
    const plan: FaultPlan = { victim, phase, action, stallMs };
    await group.all("hook", () => plan, 10_000);
    const others = Array.from({ length: o.ranks }, (_, r) => r).filter((r) => r !== victim);
    let victimCall: Promise<unknown> | null = null;
    const failed = new Set<number>(); // survivors done (failed, or checked at the expected point)
    for (let step = 1; step <= expected.step && failed.size < others.length; step++) {
      const inputs = makeInputs(config, T, seed + step);
      const results = new Map<number, Awaited<ReturnType<World["dispatchRecv"]>>>();
      for (const call of CALLS) {
        const victimIn = step === 1 && CALLS.indexOf(call) <= CALLS.indexOf(phase);
        const run = (r: number): Promise<unknown> => {
          if (call === "dispatchSend") return world.dispatchSend(r, inputs[r]);
          if (call === "dispatchRecv") return world.dispatchRecv(r).then((d) => results.set(r, d));
          if (call === "combineSend") {
            const d = results.get(r);
            return world.combineSend(r, d ? expertOutputsAny(config, r, d) : new Uint16Array(0));
          }
          return world.combineRecv(r);
        };
        // Not awaited: it dies or stalls. Settles to the error (or null), so it never goes unhandled.
        if (victimIn && call === phase)
          victimCall = run(victim).then(
            () => null,
            (e: unknown) => e,
          );
        const at = step === expected.step && call === expected.call;
        const live = others.filter((r) => !failed.has(r));
        const outcomes = await Promise.all(
          [...live, ...(victimIn && call !== phase ? [victim] : [])].map(async (r) => {
            const start = Date.now();
            try {
              await run(r);
              return { r, error: null as unknown, elapsedMs: Date.now() - start };
            } catch (e) {
              return { r, error: e, elapsedMs: Date.now() - start };
            }
          }),
        );
        for (const { r, error, elapsedMs } of outcomes) {
          if (r === victim) {
            if (error !== null)
              problems.push(`victim rank ${victim} failed before its fault: ${describeError(error)}`);
            continue;
          }
          if (error === null && !at) continue;
          failed.add(r);
          if (error === null) {
            survivors.push({ rank: r, ok: false, detail: `no error in step ${step} ${call}`, elapsedMs });
            continue;
          }
          const f = error as { name?: string; rank?: number; peer?: number; stage?: string };
          const named =
            f.name === "TimeoutError" && f.rank === r && f.peer === victim && f.stage === expected.stage;
          const where = at
            ? ""
            : ` (in step ${step} ${call}, expected step ${expected.step} ${expected.call})`;
          const ok = at && named && elapsedMs <= o.timeoutMs + slackMs;
          survivors.push({ rank: r, ok, detail: `${describeError(error)}${where}`, elapsedMs });
        }
        if (step === expected.step && call === expected.call) break;
      }
    }
    for (const s of survivors)
      if (!s.ok) problems.push(`rank ${s.rank}: ${s.detail} after ${s.elapsedMs} ms`);
    if (survivors.length !== others.length)
      problems.push(`${others.length - survivors.length} rank(s) never failed`);
    if (victimCall === null) problems.push("the victim's faulted call never ran");
    else {
      const e = await (victimCall as Promise<unknown>);
      const exit = group.exitOf(victim);
      victimReport = exit ? exit.message : e === null ? "answered normally" : describeError(e);
      const ok =
        action === "kill"
          ? exit !== null && exit.signal === "SIGKILL"
          : e !== null && /stalled/.test(String((e as Error).message));
      if (!ok) problems.push(`victim rank ${victim}: ${victimReport}`);
    }
  } catch (e) {
    problems.push(`the world failed: ${describeError(e)}`);
  } finally {
    await group.close(2000);
  }
  const recovery = await o.recover(config);
  if (!recovery.ok) problems.push(`recovery: ${recovery.detail}`);
  return {
    case: `${layout}: ${action} rank ${victim} in ${phase}`,
    layout,
    phase,
    action,
    victim,
    ranks: o.ranks,
    timeoutMs: o.timeoutMs,
    ok: problems.length === 0,
    problems,
    expectedStage: expected.stage,
    survivors,
    victimReport,
    recovery,
    wallMs: Date.now() - t0,
  };
}
