import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { computeLayout, layoutParams } from "@switchyard/core";
import { PACKAGE_DIR } from "@switchyard/cuda";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../../test-support/tempDir.js";
import {
  abiFuzzConfig,
  encodeAbiFuzzCase,
  formatAbiFuzz,
  portableCommand,
  runAbiFuzz,
} from "../src/checks/abiFuzz.js";

/** The reader of packages/cuda/test/native/abi_fuzz/abi_fuzz.cc (readCase), written again in TypeScript. */
function decode(buf: Uint8Array) {
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let o = 0;
  const magic = String.fromCharCode(...buf.subarray(0, 4));
  o = 4;
  const version = v.getUint32(o, true);
  const count = v.getUint32(o + 4, true);
  o += 8;
  const params = Array.from({ length: count }, (_, i) => Number(v.getBigUint64(o + 8 * i, true)));
  o += 8 * count;
  const symmetricBytes = Number(v.getBigUint64(o, true));
  o += 8;
  const u32 = Array.from({ length: 8 }, (_, i) => v.getUint32(o + 4 * i, true));
  o += 32;
  const rows = Number(v.getBigUint64(o, true));
  o += 8;
  const blobs: Uint8Array[] = [];
  for (let i = 0; i < 7; i++) {
    const n = Number(v.getBigUint64(o, true));
    blobs.push(buf.subarray(o + 8, o + 8 + n));
    o += 8 + n;
  }
  return { magic, version, params, symmetricBytes, u32, rows, blobs, end: o };
}

function script(body: string): string[] {
  const dir = tempDir("sy-fake-fuzz-");
  const path = join(dir, "fuzz.mjs");
  writeFileSync(path, body);
  return [process.execPath, path];
}

describe("C ABI fuzzer orchestration (no GPU)", () => {
  it("writes the case file abi_fuzz reads: core's parameters, inputs and reference outputs", async () => {
    const config = abiFuzzConfig();
    const buf = await encodeAbiFuzzCase(config, 12, 3);
    const d = decode(buf);
    const layout = computeLayout(config);
    expect(d).toMatchObject({
      magic: "SYFZ",
      version: 1,
      symmetricBytes: layout.symmetricBytes,
      rows: layout.rows,
      end: buf.length,
    });
    expect(d.params).toEqual(layoutParams(layout));
    expect(d.u32).toEqual([12, 256, 3, 4, 1, 16, 2, 0]);
    const [x, scales, idx, weights, out, counts, y] = d.blobs.map((b) => b.length);
    expect([x, scales, idx, weights, out, counts, y]).toEqual([
      12 * 256 * 2,
      0,
      12 * 3 * 4,
      12 * 3 * 4,
      layout.rows * 256 * 2,
      4 * 4,
      12 * 256 * 2,
    ]);
    const used = new Int32Array(d.blobs[2].slice().buffer).filter((e) => e >= 0).length;
    const sum = new Int32Array(d.blobs[5].slice().buffer).reduce((a, b) => a + b, 0);
    expect(sum).toBe(used);
  });

  it("collects the fuzzer's lines: passes on a clean run, names the calls that were not as documented", async () => {
    const line = (ok: boolean, call: string) =>
      JSON.stringify({
        call,
        case: "x NULL",
        want: "SY_ERR_INVALID_ARGUMENT",
        got: ok ? "SY_ERR_INVALID_ARGUMENT" : "SY_OK",
        ok,
        message: "m",
      });
    const good = await runAbiFuzz({
      command: script(
        `console.log(${JSON.stringify(line(true, "sy_dispatch_send"))}); console.log(JSON.stringify({summary:{mode:"gpu",refused:1,accepted:0,refusedBy:{SY_ERR_INVALID_ARGUMENT:1}}}))`,
      ),
    });
    expect(good).toMatchObject({ ok: true, calls: 1, exitCode: 0, signal: null });
    expect(good.command).toContain("--case");
    // The report keeps no path of the machine: the case's temporary folder is named, not given.
    expect(good.command[good.command.indexOf("--case") + 1]).toBe("$TMPDIR/sy-abi-fuzz-XXXXXX/case.bin");
    const bin = join(PACKAGE_DIR, "build", "abi_fuzz");
    expect(
      portableCommand([bin, "--case", "/t/sy-abi-fuzz-1a2B3c/case.bin"], "/t/sy-abi-fuzz-1a2B3c"),
    ).toEqual(["packages/cuda/build/abi_fuzz", "--case", "$TMPDIR/sy-abi-fuzz-XXXXXX/case.bin"]);
    expect(portableCommand(["/usr/bin/node", "x.js"], "/t/d")).toEqual(["/usr/bin/node", "x.js"]);
    expect(formatAbiFuzz(good)).toMatch(
      /^PASS abi-fuzz: 1 C ABI calls \(gpu\), 1 refused \(SY_ERR_INVALID_ARGUMENT 1\)/,
    );
    const bad = await runAbiFuzz({
      command: script(
        `console.log(${JSON.stringify(line(false, "sy_combine_send"))}); console.log(JSON.stringify({summary:{}})); process.exitCode = 1`,
      ),
    });
    expect(bad.ok).toBe(false);
    expect(formatAbiFuzz(bad)).toMatch(
      /sy_combine_send \(x NULL\): wanted SY_ERR_INVALID_ARGUMENT, got SY_OK/,
    );
  });

  it("a crash (a signal, no summary) fails and names the last call answered", async () => {
    const r = await runAbiFuzz({
      command: script(
        `console.log(JSON.stringify({call:"sy_combine_recv",case:"y on another GPU",want:"a",got:"a",ok:true,message:""})); process.kill(process.pid, "SIGSEGV")`,
      ),
    });
    expect(r).toMatchObject({ ok: false, signal: "SIGSEGV", summary: null });
    expect(formatAbiFuzz(r)).toMatch(/last call answered: sy_combine_recv \(y on another GPU\)/);
  });
});
