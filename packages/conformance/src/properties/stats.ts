import {
  combineWeightsOf,
  dtypeBytes,
  type EpConfig,
  type PeerTraffic,
  type RankInput,
  referenceDispatch,
  type Session,
  type StepStats,
} from "@switchyard/core";
import fc from "fast-check";
import { makeSchedule } from "../generators/schedule.js";
import { describeWorld, worldArb } from "../generators/world.js";
import { runStep } from "../harness/drive.js";
import { provenanceExperts } from "../harness/experts.js";
import { makeInputs } from "../harness/inputs.js";
import { ConformanceMismatch, Problems } from "../harness/problems.js";
import { expectRefusal } from "../harness/refusal.js";
import { withSession } from "../harness/session.js";
import { verifyStep } from "../harness/verify.js";
import { combineRecvWeights } from "../harness/weightsAt.js";
import { defineProperty } from "../property.js";

const CALLS = ["dispatchSend", "dispatchRecv", "combineSend", "combineRecv"] as const;
type Call = (typeof CALLS)[number];
const FIELDS = ["dispatchSent", "dispatchReceived", "combineSent", "combineReceived"] as const;

/**
 * Rows per (sender, receiver) implied by the reference (docs/protocol.md): `dispatch[src][dst]`
 * route records, one per token of src routed to any of dst's experts (a token crosses to a rank
 * once, however many of its experts live there); `combine[expertRank][home]` = partials, one per
 * record the expert rank received from the owners of home's DP group (each goes to every rank of
 * that group); with `combineWeights` `home`, one row per (token, slot) instead: every row the
 * expert rank received from those owners.
 */
export function expectedTraffic(
  config: EpConfig,
  inputs: RankInput[],
): { dispatch: number[][]; combine: number[][] } {
  const R = config.ranks;
  const dp = config.dpSize;
  const dispatch = Array.from({ length: R }, () => new Array<number>(R).fill(0));
  const slots = Array.from({ length: R }, () => new Array<number>(R).fill(0));
  referenceDispatch(config, inputs).forEach((experts, dst) => {
    const tokens = new Set<string>();
    for (const rows of experts)
      for (const row of rows) {
        tokens.add(`${row.srcRank},${row.srcToken}`);
        slots[row.srcRank][dst]++;
      }
    for (const key of tokens) dispatch[Number(key.split(",")[0])][dst]++;
  });
  const perToken = combineWeightsOf(config) === "home" ? slots : dispatch;
  const combine = Array.from({ length: R }, (_, p) =>
    Array.from({ length: R }, (_, home) => {
      let n = 0;
      for (let src = Math.floor(home / dp) * dp; src < (Math.floor(home / dp) + 1) * dp; src++)
        n += perToken[src][p];
      return n;
    }),
  );
  return { dispatch, combine };
}

/**
 * Bytes per row as docs/protocol.md states them (recomputed here, not taken from core): a route
 * record's payload, scales and 2 + 4 * min(topK, localExperts) words; a bf16 partial.
 */
function documentedRowBytes(config: EpConfig, phase: "dispatch" | "combine"): number {
  if (phase === "combine") return 2 * config.hidden;
  const S = config.dispatchDtype === "fp8-e4m3" ? config.hidden / 128 : 0;
  const J = Math.min(config.topK, config.experts / config.ranks);
  return config.hidden * dtypeBytes(config.dispatchDtype) + 4 * S + 4 * (2 + 4 * J);
}

function checkTraffic(
  got: PeerTraffic | null | undefined,
  want: number[] | null,
  perRow: number,
  what: string,
  problems: Problems,
): void {
  if (want === null) {
    if (got !== null) problems.add(`${what}: expected null (the call has not completed this step)`);
    return;
  }
  if (got === null || got === undefined || !Array.isArray(got.rows) || !Array.isArray(got.bytes)) {
    problems.add(`${what}: expected { rows, bytes } arrays, got ${JSON.stringify(got)}`);
    return;
  }
  const rows = want.join(",");
  const bytes = want.map((n) => n * perRow).join(",");
  if (got.rows.join(",") !== rows) problems.add(`${what}.rows = [${got.rows.join(",")}], expected [${rows}]`);
  if (got.bytes.join(",") !== bytes)
    problems.add(`${what}.bytes = [${got.bytes.join(",")}], expected [${bytes}] (${perRow} bytes a row)`);
}

function checkWaits(got: unknown, completed: boolean, R: number, what: string, problems: Problems): void {
  if (got === null) return;
  if (!completed) {
    problems.add(
      `${what}: expected null (the receive has not completed this step), got ${JSON.stringify(got)}`,
    );
    return;
  }
  const ok =
    Array.isArray(got) &&
    got.length === R &&
    got.every((v) => typeof v === "number" && Number.isFinite(v) && v >= 0);
  if (!ok)
    problems.add(`${what}: expected null or ${R} finite milliseconds >= 0, got ${JSON.stringify(got)}`);
}

/** Checks one rank's counters after `completed` (null: nothing yet) of step `step`. */
function checkStats(
  config: EpConfig,
  stats: StepStats,
  rank: number,
  step: number,
  completed: Call | null,
  traffic: { dispatch: number[][]; combine: number[][] } | null,
  label: string,
): void {
  const problems = new Problems();
  const R = config.ranks;
  if (stats.rank !== rank) problems.add(`rank = ${stats.rank}, expected ${rank}`);
  if (stats.step !== step) problems.add(`step = ${stats.step}, expected ${step}`);
  if (stats.completed !== completed)
    problems.add(`completed = ${JSON.stringify(stats.completed)}, expected ${JSON.stringify(completed)}`);
  const done = completed === null ? 0 : CALLS.indexOf(completed) + 1;
  const t = traffic;
  const want = [
    done >= 1 && t ? t.dispatch[rank] : null,
    done >= 2 && t ? t.dispatch.map((row) => row[rank]) : null,
    done >= 3 && t ? t.combine[rank] : null,
    done >= 4 && t ? t.combine.map((row) => row[rank]) : null,
  ];
  FIELDS.forEach((field, i) => {
    const perRow = documentedRowBytes(config, i < 2 ? "dispatch" : "combine");
    checkTraffic(stats[field], want[i], perRow, field, problems);
  });
  checkWaits(stats.dispatchWaitMs, done >= 2, R, "dispatchWaitMs", problems);
  checkWaits(stats.combineWaitMs, done >= 4, R, "combineWaitMs", problems);
  problems.throwIfAny(`${label}: stats(${rank}) after ${completed ?? "no call"}`);
}

/**
 * `stats(rank)` (gated on `capabilities.stats`) reports, after each call of each step, the rows
 * and bytes per peer that the reference dispatch implies, nothing for calls not yet made, and is
 * unchanged by a refused call.
 */
export const sessionStats = defineProperty({
  name: "session/stats",
  required: false,
  summary:
    "stats(rank) after every call: step, last completed call, rows per peer of each completed phase as the " +
    "reference dispatch implies, bytes = rows * documented row bytes, waits null or [R] ms; refused calls change nothing",
  gate: (caps) => (caps.stats ? null : "backend declares no stats (capabilities.stats)"),
  arbitrary: (space) => fc.record({ world: worldArb(space, { minSteps: 1, maxSteps: 3 }), seed: fc.nat() }),
  async check(ctx, { world, seed }) {
    const { config } = world;
    const R = config.ranks;
    await withSession(ctx, config, async (session: Session) => {
      if (typeof session.stats !== "function")
        throw new ConformanceMismatch("capabilities.stats is declared, but the session has no stats()");
      const stats = (r: number) => session.stats!(r);
      for (let r = 0; r < R; r++) checkStats(config, await stats(r), r, 0, null, null, "new session");
      await expectRefusal(`stats(${R}) of a ${R}-rank world`, "InputError", () => stats(R));
      const experts = provenanceExperts(config);
      for (let i = 0; i < world.steps.length; i++) {
        const label = `step ${i}`;
        const inputs = makeInputs(config, world.steps[i]);
        const traffic = expectedTraffic(config, inputs);
        const at = async (r: number, call: Call) =>
          checkStats(config, await stats(r), r, i, call, traffic, label);
        const schedule = {
          ...makeSchedule(R, i % 2 ? "interleaved" : "phased", seed + i),
          concurrent: false,
        };
        const outcome = await runStep(session, inputs, experts, {
          schedule,
          label,
          hooks: {
            beforeRecv: (r) => at(r, "dispatchSend"),
            beforeCombineSend: (r) => at(r, "dispatchRecv"),
            beforeCombineRecv: (r) => at(r, "combineSend"),
          },
        });
        verifyStep(config, inputs, outcome, { rows: true }, label);
        for (let r = 0; r < R; r++) await at(r, "combineRecv");
        const r = seed % R;
        await expectRefusal(`rank ${r} combineRecv after the step`, "PhaseError", () =>
          session.combineRecv(r, combineRecvWeights(config, inputs[r])),
        );
        await at(r, "combineRecv");
      }
    });
  },
  describe: (v) => `${describeWorld(v.world)}; seed ${v.seed}`,
});
