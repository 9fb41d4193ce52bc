import { describe, expect, it } from "vitest";
import { tryLoad } from "../src/native/loader.js";

describe("the native loader", () => {
  it("the loader collects every failure into one reason and never throws", () => {
    const r = tryLoad(["/nonexistent/a.node", "/nonexistent/b.node"]);
    expect(r.addon).toBeNull();
    expect(r.reason).toMatch(/^native addon not built: run `npm run build:native -w @switchyard\/cuda`/);
    expect(r.reason).toContain("/nonexistent/a.node: not found; /nonexistent/b.node: not found");
  });

  it("a file that is not an addon is reported as a load failure", () => {
    const r = tryLoad([new URL("../package.json", import.meta.url).pathname]);
    expect(r.reason).toMatch(/^native addon failed to load/);
  });
});
