import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bf16ToNumber, encodeFp8, f32Bits, numberToBf16, scaleExponent } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../../test-support/tempDir.js";

const EXPS = [
  -126, -125, -120, -100, -60, -20, -9, -6, -3, -1, 0, 1, 2, 3, 7, 10, 20, 60, 100, 119, 120, 127,
];

function nvcc(): string | null {
  try {
    execFileSync("nvcc", ["--version"], { stdio: "ignore" });
    return null;
  } catch {
    return "nvcc not found";
  }
}
const skip = nvcc();

describe("device codecs (codec.cuh compiled for the host) vs core", () => {
  it.skipIf(skip !== null)(
    `fp8 encode, block scale exponent and bf16 rounding are bit-exact${skip ? ` (skipped: ${skip})` : ""}`,
    () => {
      const dir = tempDir("sy-codec-");
      const exe = join(dir, "codec_dump");
      execFileSync(
        "nvcc",
        [
          "-std=c++17",
          "-O2",
          "-x",
          "cu",
          fileURLToPath(new URL("./native/codec_dump.cu", import.meta.url)),
          "-o",
          exe,
        ],
        {
          stdio: "inherit",
        },
      );
      const out = execFileSync(exe, { maxBuffer: 1 << 26 });
      let at = 0;
      const bad: string[] = [];
      for (const s of EXPS) {
        for (let x = 0; x < 65536; x++, at++) {
          // A NaN keeps the sign of its bf16 bits (core's quantizeRows); encodeFp8 sees no NaN sign.
          const v = bf16ToNumber(x);
          const want = Number.isNaN(v) ? (x & 0x8000 ? 0xff : 0x7f) : encodeFp8(v / 2 ** s);
          if (out[at] !== want && bad.length < 5)
            bad.push(`encode(x=0x${x.toString(16)}, s=${s}) = ${out[at]}, core ${want}`);
        }
      }
      for (let x = 0; x < 65536; x++, at++) {
        const a = Math.abs(bf16ToNumber(x));
        const want = scaleExponent(Number.isFinite(a) ? a : 0);
        const got = (out[at] << 24) >> 24;
        if (got !== want && bad.length < 10)
          bad.push(`scaleExponent(|0x${x.toString(16)}|) = ${got}, core ${want}`);
      }
      const f = new Float32Array(1);
      const u = new Uint32Array(f.buffer);
      for (let i = 0; i < 65536; i++, at += 2) {
        u[0] = (Math.imul(i, 65537) + 12345) >>> 0;
        const want = numberToBf16(f[0]);
        const got = out[at] | (out[at + 1] << 8);
        if (got !== want && !(Number.isNaN(f[0]) && (got & 0x7fff) === 0x7fc0) && bad.length < 15)
          bad.push(`floatToBf16(0x${f32Bits(f[0]).toString(16)}) = ${got}, core ${want}`);
      }
      expect(bad).toEqual([]);
    },
    120_000,
  );
});
