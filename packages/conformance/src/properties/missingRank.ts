import fc from "fast-check";
import { describeWorld, worldArb } from "../generators/world.js";
import { makeInputs } from "../harness/inputs.js";
import { ConformanceMismatch, errorMessage, errorName } from "../harness/problems.js";
import { withSession } from "../harness/session.js";
import { dispatchInputOf } from "../harness/weightsAt.js";
import { defineProperty } from "../property.js";

/** How long the property lets a session wait for the rank that never comes. */
export const MISSING_RANK_TIMEOUT_MS = 300;

/**
 * A rank that never sends makes the others' dispatchRecv fail, naming that rank, within the
 * session's timeout: TimeoutError for a backend that waits, ProtocolError for one that sees the
 * missing signal at once (the reference). Never a hang.
 */
export const missingRank = defineProperty({
  name: "session/missing-rank",
  required: true,
  summary:
    "a rank that never sends: dispatchRecv elsewhere fails within timeoutMs with TimeoutError or ProtocolError naming it",
  wants: { minRanks: 2 },
  arbitrary: (space) => fc.record({ world: worldArb(space), missing: fc.nat(), receiver: fc.nat() }),
  async check(ctx, { world, missing: m, receiver: p }) {
    const { config } = world;
    const R = config.ranks;
    const missing = m % R;
    const receiver = (missing + 1 + (p % (R - 1))) % R;
    const inputs = makeInputs(config, world.steps[0]);
    const timed = { ...ctx, sessionOptions: { ...ctx.sessionOptions, timeoutMs: MISSING_RANK_TIMEOUT_MS } };
    await withSession(timed, config, async (session) => {
      for (let r = 0; r < R; r++)
        if (r !== missing) await session.dispatchSend(r, dispatchInputOf(config, inputs[r]));
      const limit = MISSING_RANK_TIMEOUT_MS + 5_000;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const outcome = await Promise.race([
        Promise.resolve()
          .then(() => session.dispatchRecv(receiver))
          .then(
            () => ({ ok: true as const }),
            (e: unknown) => ({ ok: false as const, e }),
          ),
        new Promise<"hang">((resolve) => {
          timer = setTimeout(() => resolve("hang"), limit);
        }),
      ]);
      clearTimeout(timer);
      const what = `rank ${receiver} dispatchRecv while rank ${missing} never sent`;
      if (outcome === "hang") throw new ConformanceMismatch(`${what}: still waiting after ${limit} ms`);
      if (outcome.ok) throw new ConformanceMismatch(`${what}: returned a result`);
      const name = errorName(outcome.e);
      const message = errorMessage(outcome.e);
      if (name !== "TimeoutError" && name !== "ProtocolError")
        throw new ConformanceMismatch(
          `${what}: expected TimeoutError or ProtocolError, got ${name}: ${message}`,
        );
      const peer = (outcome.e as { peer?: unknown }).peer;
      if (peer !== missing && !new RegExp(`\\brank ${missing}\\b`).test(message))
        throw new ConformanceMismatch(`${what}: the ${name} does not name rank ${missing}: ${message}`);
    });
  },
  describe: (v) => `${describeWorld(v.world)}; missing #${v.missing}, receiver #${v.receiver}`,
});
