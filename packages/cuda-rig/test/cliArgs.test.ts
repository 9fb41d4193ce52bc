import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseRigArgs, RIG_COMMANDS, RIG_USAGE, RigUsageError } from "../src/cliArgs.js";

describe("the rig's command line", () => {
  it("reads a command's flags and falls back where one is not given", () => {
    const a = parseRigArgs(["faults", "--ranks", "2", "--layouts", "contiguous"]);
    if (a.help) throw new Error("help");
    expect(a.command).toBe("faults");
    expect(a.arg("ranks", "9")).toBe("2");
    expect(a.arg("layouts", "masked,contiguous")).toBe("contiguous");
    expect(a.arg("timeout-ms", "1000")).toBe("1000");
  });

  it("runs checks when no command is given", () => {
    const a = parseRigArgs(["--layout", "contiguous"]);
    expect(a).toMatchObject({ help: false, command: "checks" });
    if (!a.help) expect(a.arg("layout", "masked")).toBe("contiguous");
    expect(parseRigArgs([])).toMatchObject({ help: false, command: "checks" });
  });

  it("refuses an unknown command, an unknown flag, a flag without a value and a mistyped layout", () => {
    expect(() => parseRigArgs(["chekcs"])).toThrow(RigUsageError);
    expect(() => parseRigArgs(["chekcs"])).toThrow(/unknown command "chekcs": one of checks, baseline/);
    expect(() => parseRigArgs(["soak", "--stepz", "5"])).toThrow(/soak: .*stepz.*its flags: --steps/);
    expect(() => parseRigArgs(["checks", "--ranks"])).toThrow(RigUsageError);
    expect(() => parseRigArgs(["checks", "--layout", "contigous"])).toThrow(
      /--layout contigous: masked or contiguous/,
    );
    expect(() => parseRigArgs(["checks", "extra"])).toThrow(RigUsageError);
  });

  it("takes --blocks as a whole number of SMs and refuses anything else", () => {
    const a = parseRigArgs(["checks", "--blocks", "1"]);
    expect(a.help === false && a.arg("blocks", "")).toBe("1");
    expect(() => parseRigArgs(["checks", "--blocks", "-1"])).toThrow(RigUsageError);
    for (const bad of ["0", "1.5", "two", "01"]) {
      expect(() => parseRigArgs(["checks", "--blocks", bad])).toThrow(
        new RegExp(`--blocks ${bad.replace(".", "\\.")}: a whole number of SMs, 1 or more`),
      );
    }
  });

  it("--help asks for the usage, which lists every command; bench keeps its own --help", () => {
    expect(parseRigArgs(["--help"])).toEqual({ help: true });
    expect(parseRigArgs(["soak", "-h"])).toEqual({ help: true });
    for (const name of Object.keys(RIG_COMMANDS)) expect(RIG_USAGE).toContain(`  ${name}`);
    const b = parseRigArgs(["bench", "--help", "--ranks", "2"]);
    expect(b).toMatchObject({ help: false, command: "bench", rest: ["--help", "--ranks", "2"] });
  });

  it("lists every flag the commands read (checks/commands.ts, cli.ts), so none is refused by mistake", () => {
    const listed = new Set(Object.values(RIG_COMMANDS).flatMap((c) => c.flags));
    for (const file of ["../src/checks/commands.ts", "../src/cli.ts"]) {
      const source = readFileSync(new URL(file, import.meta.url), "utf8");
      const read = [...source.matchAll(/(?:\barg\(|\bnum\(arg,\s*)"([a-z-]+)"/g)].map((m) => m[1]);
      expect(read.length, file).toBeGreaterThan(0);
      for (const flag of read) expect(listed.has(flag), `${file} reads --${flag}`).toBe(true);
    }
  });
});
