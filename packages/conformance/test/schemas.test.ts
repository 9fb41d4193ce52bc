import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { referenceBackend } from "@switchyard/core";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { REPORT_VERSION, resolveBackend, runConformance } from "../src/index.js";

async function validator() {
  const file = join(import.meta.dirname, "..", "schemas", "conformance-report.schema.json");
  const schema = JSON.parse(await readFile(file, "utf8"));
  return new Ajv({ allErrors: true, strict: true, strictRequired: false }).compile(schema);
}

/** The report as --json writes it. */
const asJson = (v: unknown) => JSON.parse(JSON.stringify(v));

describe("conformance report schema", () => {
  it("describes passing, failing, unavailable and interrupted reports", async () => {
    const validate = await validator();
    const stop = new AbortController();
    stop.abort("SIGTERM");
    const reports = [
      await runConformance(referenceBackend, { only: "dispatch/rows", numRuns: 2 }),
      await runConformance(await resolveBackend("./fixtures/factoryModule.mjs", import.meta.dirname), {
        only: "combine/accuracy",
        seed: 5,
        shrink: false,
      }),
      await runConformance(
        { ...referenceBackend, unavailableReason: async () => "no device" },
        { only: "dispatch" },
      ),
      await runConformance(referenceBackend, { only: "dispatch/rows", signal: stop.signal }),
    ];
    expect(reports.map((r) => [r.ok, r.unavailable !== null, r.interrupted])).toEqual([
      [true, false, false],
      [false, false, false],
      [true, true, false],
      [false, false, true],
    ]);
    for (const report of reports) {
      expect(report.version).toBe(REPORT_VERSION);
      const ok = validate(asJson(report));
      expect(validate.errors ?? []).toEqual([]);
      expect(ok).toBe(true);
    }
  });

  it("refuses a report without its version, or with a field it does not know", async () => {
    const validate = await validator();
    const { version: _, ...unversioned } = asJson(
      await runConformance(referenceBackend, { only: "session/layout", numRuns: 1 }),
    );
    expect(validate(unversioned)).toBe(false);
    expect(validate.errors?.[0]?.params).toEqual({ missingProperty: "version" });
    expect(validate({ ...unversioned, version: REPORT_VERSION, extra: 1 })).toBe(false);
  });
});
