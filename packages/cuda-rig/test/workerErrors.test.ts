import { TimeoutError } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { deserializeError, serializeError, WorkerExitError } from "../src/workerErrors.js";

describe("worker errors", () => {
  it("errors cross the worker channel with their class and fields", () => {
    const back = deserializeError(serializeError(new TimeoutError(1, 2, "combine recv", 300)));
    expect(back).toBeInstanceOf(TimeoutError);
    expect(back).toMatchObject({
      name: "TimeoutError",
      rank: 1,
      peer: 2,
      stage: "combine recv",
      timeoutMs: 300,
    });
    expect(back.message).toMatch(/rank 1 waited 300 ms in combine recv for rank 2/);
    const exit = deserializeError(serializeError(new WorkerExitError(3, null, "SIGKILL")));
    expect(exit).toBeInstanceOf(WorkerExitError);
    expect(exit.message).toMatch(/rank 3: worker process exited \(signal SIGKILL\)/);
    expect(deserializeError({ name: "Weird", message: "m", fields: {} })).toBeInstanceOf(Error);
  });
});
