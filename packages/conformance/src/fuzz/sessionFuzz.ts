import type { EpConfig, RankInput, Session } from "@switchyard/core";
import fc from "fast-check";
import { describeWorld, worldArb } from "../generators/world.js";
import { ConformanceMismatch, errorMessage, errorName } from "../harness/problems.js";
import { Rng } from "../harness/rng.js";
import { defineProperty, type PropertyContext } from "../property.js";
import { configProblems, withDefaults } from "./configOracle.js";
import type { FuzzCounts } from "./counts.js";
import { inputProblems } from "./inputOracle.js";
import { mutateConfig } from "./mutateConfig.js";
import { mutateInput } from "./mutateInput.js";
import { CALLS, SessionModel } from "./sessionModel.js";
import { badExpertOut, describeOps, type FuzzOp, opArb } from "./sessionOps.js";
import { badRank, show } from "./values.js";

function sameValues(a: RankInput, b: unknown): boolean {
  const o = b as Record<string, unknown>;
  return (["x", "scales", "topkIdx", "topkWeights"] as const).every((k) => {
    const x = a[k] as ArrayLike<number> | undefined;
    const y = o[k] as ArrayLike<number> | undefined;
    if (x === undefined || y === undefined) return x === y;
    return x.length === y.length && Array.from(x).every((v, i) => Object.is(v, y[i]));
  });
}

const DESTROYED = ["DestroyedError"] as const;

async function runOp(ctx: PropertyContext, m: SessionModel, op: FuzzOp, counts: FuzzCounts): Promise<void> {
  const { session, config, R } = m;
  const gone = m.destroyed;
  switch (op.kind) {
    case "advance": {
      if (gone) {
        const r = op.pick % R;
        const call = CALLS[m.phase[r]];
        const out = new Uint16Array(m.rows * config.hidden);
        await m.call(
          `rank ${r} ${call} after destroy()`,
          DESTROYED,
          () => invoke(m, call, r, m.validInput(r), out),
          [],
        );
        return;
      }
      const ready = Array.from({ length: R }, (_, r) => r).filter((r) => m.canProgress(r));
      await m.legal(ready[op.pick % ready.length]);
      return;
    }
    case "finish":
      if (!gone) await m.finish();
      return;
    case "badSend": {
      const r = op.pick % R;
      const rng = new Rng(op.seed, 21);
      const valid = m.validInput(r);
      const { input, edits } = mutateInput(config, valid, rng);
      const label = `rank ${r} dispatchSend (phase ${CALLS[m.phase[r]]} next) with ${edits.join(", ")}`;
      const bad = inputProblems(config, r, input).size > 0;
      const idle = m.phase[r] === 0;
      if (gone) await m.call(label, DESTROYED, () => m.session.dispatchSend(r, input as RankInput), [input]);
      else if (bad) {
        const expected = idle ? ["InputError"] : ["InputError", "PhaseError"];
        await m.call(label, expected, () => m.session.dispatchSend(r, input as RankInput), [input]);
      } else if (!idle) {
        await m.call(label, ["PhaseError"], () => m.session.dispatchSend(r, input as RankInput), [input]);
      } else if (m.canProgress(r) && m.substitute(r, input as RankInput, sameValues(valid, input))) {
        counts.editedValid++;
        await m.legal(r); // a valid input after all (a view, shared memory, an extra field, a harmless id)
      }
      return;
    }
    case "badExpertOut": {
      const r = op.pick % R;
      const { value, what } = badExpertOut(m.rows * config.hidden, config.hidden, new Rng(op.seed, 22));
      const label = `rank ${r} combineSend with expert output ${what}`;
      const expected = gone ? DESTROYED : m.phase[r] === 2 ? ["InputError"] : ["PhaseError", "InputError"];
      await m.call(label, expected, () => session.combineSend(r, value as Uint16Array), [value]);
      return;
    }
    case "badRank": {
      const rank = badRank(R, new Rng(op.seed, 23)) as number;
      const hasStats = typeof session.stats === "function";
      const call = op.call === 4 && hasStats ? "stats" : CALLS[op.call % 4];
      const out = new Uint16Array(m.rows * config.hidden);
      const input = m.validInput(0);
      await m.call(
        `${call} on rank ${show(rank)}`,
        gone ? DESTROYED : ["InputError"],
        () => invoke(m, call, rank, input, out),
        [input, out],
      );
      return;
    }
    case "outOfPhase": {
      const r = op.pick % R;
      const wrong = CALLS.filter((_, i) => i !== m.phase[r]);
      const call = wrong[op.call % wrong.length];
      const out = new Uint16Array(m.rows * config.hidden);
      const input = m.validInput(r);
      const label = `rank ${r} ${call} while its next call is ${CALLS[m.phase[r]]}`;
      await m.call(label, gone ? DESTROYED : ["PhaseError"], () => invoke(m, call, r, input, out), [
        input,
        out,
      ]);
      return;
    }
    case "badConfig": {
      const { input, edits } = mutateConfig(config, new Rng(op.seed, 24));
      if (configProblems(withDefaults(input)).size === 0) return; // still valid: not created (it may be huge)
      counts.badTried++;
      let created: Awaited<ReturnType<typeof ctx.backend.createSession>> | null = null;
      try {
        created = await ctx.backend.createSession(input as EpConfig, ctx.sessionOptions);
      } catch (e) {
        if (errorName(e) !== "ConfigError")
          throw new ConformanceMismatch(
            `createSession after ${edits.join(", ")}: expected ConfigError, got ${errorName(e)}: ${errorMessage(e)}`,
          );
        counts.badRefused++;
        counts.byError.ConfigError = (counts.byError.ConfigError ?? 0) + 1;
      }
      if (created) {
        await created.destroy().catch(() => {});
        throw new ConformanceMismatch(
          `createSession after ${edits.join(", ")}: accepted, expected ConfigError`,
        );
      }
      return;
    }
    case "destroy":
      if (!gone) {
        await m.call("destroy()", null, () => session.destroy(), []);
        m.destroyed = true;
      }
      return;
  }
}

function invoke(
  m: SessionModel,
  call: string,
  rank: number,
  input: RankInput,
  out: Uint16Array,
): Promise<unknown> {
  const s = m.session;
  if (call === "dispatchSend") return s.dispatchSend(rank, input);
  if (call === "dispatchRecv") return s.dispatchRecv(rank);
  if (call === "combineSend") return s.combineSend(rank, out);
  if (call === "combineRecv") return s.combineRecv(rank);
  return s.stats!(rank);
}

/**
 * `fuzz/session`: random sequences of valid and invalid session calls against a backend (see
 * `FuzzOp`), each checked against a model of the session: every invalid call refused with its
 * named error (InputError, PhaseError, DestroyedError, ConfigError), the caller's arrays never
 * written, every step that completes checked bit for bit against core's referenceDispatch and
 * referenceCombine, and after the last op one more whole step. A destroyed session answers three
 * more ops (all DestroyedError), then the run goes on with a new session.
 */
export function sessionFuzz(counts: FuzzCounts, maxOps: number) {
  return defineProperty({
    name: "fuzz/session",
    required: true,
    summary:
      "random valid and invalid calls (inputs, ranks, expert outputs, phases, configs, destroy): named errors, " +
      "caller's arrays untouched, every step exact against the reference",
    arbitrary: (space) =>
      fc.record({
        world: worldArb(space, { minSteps: 2, maxSteps: 3 }),
        ops: fc.array(opArb(), { minLength: 4, maxLength: maxOps }),
      }),
    async check(ctx, { world, ops }) {
      const { config } = world;
      const open: Session[] = [];
      const create = async () => {
        let session: Session;
        try {
          session = await ctx.backend.createSession(config, ctx.sessionOptions);
        } catch (e) {
          if (errorName(e) === "UnsupportedError") fc.pre(false);
          throw e;
        }
        open.push(session);
        counts.sessions++;
        return new SessionModel(config, session, world.steps, counts);
      };
      try {
        let m = await create();
        let sinceDestroy = 0;
        for (const op of ops) {
          // A few calls on the destroyed session, then a new one (create after destroy must work).
          if (m.destroyed && sinceDestroy++ >= 3) {
            m = await create();
            sinceDestroy = 0;
          }
          await runOp(ctx, m, op, counts);
        }
        if (m.destroyed) m = await create();
        await m.finish(); // the step in flight, or a whole step
        await m.finish(); // and one more whole step after every refusal
      } finally {
        for (const s of open)
          await Promise.resolve()
            .then(() => s.destroy())
            .catch(() => {});
      }
    },
    describe: (v) => `${describeWorld(v.world)}; ops ${describeOps(v.ops)}`,
  });
}
