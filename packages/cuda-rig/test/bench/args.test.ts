import { describe, expect, it } from "vitest";
import { BenchUsageError, parseBenchArgs } from "../../src/bench/args.js";

describe("parseBenchArgs", () => {
  it("defaults to the issue's sweep over the DeepSeek-like config", () => {
    const o = parseBenchArgs([]);
    expect(o.layouts).toEqual(["masked", "contiguous"]);
    expect(o.tokens.masked).toEqual([1, 8, 32, 128, 512]);
    expect(o.tokens.contiguous).toEqual([512, 2048, 4096, 8192]);
    expect(o).toMatchObject({
      ranks: null,
      hidden: 7168,
      experts: 256,
      topK: 8,
      inputDtype: "bf16",
      dispatchDtype: "fp8-e4m3",
      alignment: 128,
      sms: 24,
      maskedSms: 0,
      steps: 300,
      warmup: 20,
      rotate: 4,
      graphs: true,
      baseline: true,
      help: false,
    });
  });

  it("takes the masked SM budget (0: every SM) and refuses a negative one", () => {
    expect(parseBenchArgs(["--masked-sms", "16"]).maskedSms).toBe(16);
    expect(() => parseBenchArgs(["--masked-sms", "-1"])).toThrow(BenchUsageError);
  });

  it("takes any config and sweep from flags", () => {
    const o = parseBenchArgs([
      "--ranks",
      "2",
      "--layouts",
      "contiguous",
      "--contiguous-tokens",
      "64, 16",
      "--hidden",
      "1024",
      "--experts",
      "32",
      "--topk",
      "4",
      "--dispatch",
      "bf16",
      "--alignment",
      "16",
      "--sms",
      "8",
      "--eager",
      "--no-baseline",
      "--json",
      "out/b.json",
      "--svg",
      "out/b.svg",
    ]);
    expect(o).toMatchObject({
      ranks: 2,
      layouts: ["contiguous"],
      hidden: 1024,
      experts: 32,
      topK: 4,
      dispatchDtype: "bf16",
      alignment: 16,
      sms: 8,
      graphs: false,
      baseline: false,
      json: "out/b.json",
      svg: "out/b.svg",
    });
    expect(o.tokens.contiguous).toEqual([64, 16]);
  });

  it("--quick shortens the run; fp8 is accepted as a short dtype name", () => {
    const o = parseBenchArgs(["--quick", "--input", "fp8", "--dispatch", "fp8"]);
    expect(o).toMatchObject({
      steps: 50,
      warmup: 5,
      rotate: 2,
      inputDtype: "fp8-e4m3",
      dispatchDtype: "fp8-e4m3",
    });
    expect(parseBenchArgs(["--quick", "--steps", "7"]).steps).toBe(7);
    expect(parseBenchArgs(["-h"]).help).toBe(true);
  });

  it.each([
    [["--steps", "0"], /--steps 0: expected an integer >= 1/],
    [["--steps", "1.5"], /--steps 1.5/],
    [["--layouts", "masked,dense"], /"dense" is neither masked nor contiguous/],
    [["--masked-tokens", "1,,8"], /--masked-tokens 1,,8/],
    [["--masked-tokens", "0"], /--masked-tokens 0: expected an integer >= 1/],
    [["--dispatch", "fp16"], /--dispatch fp16: expected one of/],
    [["--input", "fp8", "--dispatch", "bf16"], /--input fp8-e4m3 needs --dispatch fp8-e4m3/],
    [["--hidden", "100"], /fp8 needs a multiple of 128/],
    [["--topk", "300"], /--topk 300 exceeds --experts 256/],
    [["--ranks", "3"], /--experts 256 is not a multiple of --ranks 3/],
    [["--frobnicate"], /frobnicate/],
    [["stray"], /stray/],
  ])("refuses %j", (argv, message) => {
    expect(() => parseBenchArgs(argv)).toThrow(BenchUsageError);
    expect(() => parseBenchArgs(argv)).toThrow(message);
  });
});
