import { computeLayout, REGION_NAMES } from "@switchyard/core";
import { configArb, describeConfig } from "../generators/config.js";
import { Problems } from "../harness/problems.js";
import { withSession } from "../harness/session.js";
import { defineProperty } from "../property.js";

/** A session reports its config and core's layout for it (the one source of truth for every offset). */
export const sessionLayout = defineProperty({
  name: "session/layout",
  required: true,
  summary:
    "session.config is the config asked for; session.layout is core's computeLayout (every region's offset, size)",
  arbitrary: (space) => configArb(space),
  async check(ctx, config) {
    await withSession(ctx, config, async (session) => {
      const problems = new Problems();
      for (const [k, v] of Object.entries(config)) {
        const got = (session.config as unknown as Record<string, unknown>)[k];
        if (got !== v)
          problems.add(`session.config.${k} = ${JSON.stringify(got)}, expected ${JSON.stringify(v)}`);
      }
      const want = computeLayout(config);
      const got = session.layout;
      for (const key of ["rows", "rowsPerSource", "symmetricBytes", "localBytes", "bytesPerRank"] as const) {
        if (got?.[key] !== want[key])
          problems.add(`session.layout.${key} = ${got?.[key]}, expected ${want[key]}`);
      }
      for (const name of REGION_NAMES) {
        const a = got?.regions?.[name];
        const b = want.regions[name];
        if (a?.offset !== b.offset || a?.bytes !== b.bytes)
          problems.add(
            `session.layout.regions.${name} = (${a?.offset}, ${a?.bytes}), expected (${b.offset}, ${b.bytes})`,
          );
      }
      problems.throwIfAny("session config / layout");
    });
  },
  describe: describeConfig,
});
