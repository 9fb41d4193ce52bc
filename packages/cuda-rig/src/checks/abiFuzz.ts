import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, relative } from "node:path";
import {
  computeLayout,
  defineConfig,
  dtypeBytes,
  type EpConfig,
  localExperts,
  ReferenceSession,
  scalesPerRow,
} from "@switchyard/core";
import { PACKAGE_DIR, packParams } from "@switchyard/cuda";
import { MULTICAST_OFF_ENV } from "../worker/protocol.js";
import { expertOutputs, makeInputs } from "./step.js";

/** The C ABI fuzzer's world: one rank, 4 experts, top-3, bf16 -> fp8 (x must be 16-byte aligned). */
export function abiFuzzConfig(): EpConfig {
  return defineConfig({
    ranks: 1,
    experts: 4,
    topK: 3,
    hidden: 256,
    maxTokensPerRank: 16,
    dispatchDtype: "fp8-e4m3",
  });
}

function bytesOf(v: ArrayBufferView | undefined): Uint8Array {
  return v ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : new Uint8Array(0);
}

/**
 * The case file build/abi_fuzz reads (packages/cuda/test/native/abi_fuzz/abi_fuzz.cc, readCase): one step of
 * `config` (one rank) on the inputs of `seed`, with core's reference counts and y. Little endian:
 * "SYFZ", u32 version 1, u32 parameter count, u64 params (core's layoutParams), u64 symmetricBytes,
 * u32 tokens, hidden, topK, localExperts, ranks, maxTokensPerRank, input element bytes, input scales
 * per row, u64 rows, then seven blobs (u64 length, bytes): x, scales, topkIdx, topkWeights,
 * expert outputs [rows, hidden], counts [L, R] and y [T, hidden].
 */
export async function encodeAbiFuzzCase(config: EpConfig, tokens: number, seed: number): Promise<Uint8Array> {
  if (config.ranks !== 1) throw new RangeError("encodeAbiFuzzCase: the fuzzer's world has one rank");
  const layout = computeLayout(config);
  const [input] = makeInputs(config, tokens, seed);
  const K = config.topK;
  if (tokens > 0 && input.topkIdx.subarray((tokens - 1) * K, tokens * K).every((e) => e < 0))
    input.topkIdx[(tokens - 1) * K] = 0; // the protocol-fault case needs a last token that routes
  const s = new ReferenceSession(config);
  await s.dispatchSend(0, input);
  const result = await s.dispatchRecv(0);
  const expertOut = expertOutputs(config, 0, result);
  await s.combineSend(0, expertOut);
  const y = await s.combineRecv(0);
  await s.destroy();
  const params = packParams(layout);
  const head = new DataView(new ArrayBuffer(4 + 8 + params.length * 8 + 8 + 8 * 4 + 8));
  let o = 0;
  for (const c of "SYFZ") head.setUint8(o++, c.charCodeAt(0));
  head.setUint32(o, 1, true);
  head.setUint32(o + 4, params.length, true);
  o += 8;
  for (const p of params) {
    head.setBigUint64(o, p, true);
    o += 8;
  }
  head.setBigUint64(o, BigInt(layout.symmetricBytes), true);
  o += 8;
  const u32 = [
    tokens,
    config.hidden,
    K,
    localExperts(config),
    config.ranks,
    config.maxTokensPerRank,
    dtypeBytes(config.inputDtype),
    scalesPerRow(config, config.inputDtype),
  ];
  for (const v of u32) {
    head.setUint32(o, v, true);
    o += 4;
  }
  head.setBigUint64(o, BigInt(layout.rows), true);
  const blobs = [
    input.x,
    input.scales,
    input.topkIdx,
    input.topkWeights,
    expertOut,
    result.sourceCounts,
    y,
  ].map(bytesOf);
  const total = head.byteLength + blobs.reduce((n, b) => n + 8 + b.length, 0);
  const out = new Uint8Array(total);
  out.set(new Uint8Array(head.buffer), 0);
  let at = head.byteLength;
  const len = new DataView(out.buffer);
  for (const b of blobs) {
    len.setBigUint64(at, BigInt(b.length), true);
    out.set(b, at + 8);
    at += 8 + b.length;
  }
  return out;
}

export interface AbiFuzzLine {
  call: string;
  case: string;
  want: string;
  got: string;
  ok: boolean;
  message: string;
}

export interface AbiFuzzReport {
  ok: boolean;
  command: string[];
  exitCode: number | null;
  signal: string | null;
  summary: Record<string, unknown> | null;
  calls: number;
  failures: AbiFuzzLine[];
  /** The last call it answered (where a crash happened after). */
  lastCall: AbiFuzzLine | null;
  stderr: string;
  wallMs: number;
}

export interface AbiFuzzOptions {
  /** The fuzzer (default packages/cuda/build/abi_fuzz); tests pass a stand-in command. */
  command?: string[];
  seed?: number;
  iterations?: number;
  tokens?: number;
  timeoutMs?: number;
}

/**
 * Runs the C ABI fuzzer on a case file written from core's reference; collects its JSON lines.
 * Passes when it exits 0 on its own (no crash, no signal, no exit from inside the library) and
 * every line says ok.
 */
export async function runAbiFuzz(o: AbiFuzzOptions = {}): Promise<AbiFuzzReport> {
  const t0 = Date.now();
  const seed = o.seed ?? 1;
  const fuzzCase = await encodeAbiFuzzCase(abiFuzzConfig(), o.tokens ?? 12, seed);
  // The case first: from the folder's making to its removal below, nothing throws.
  const dir = mkdtempSync(join(tmpdir(), "sy-abi-fuzz-"));
  const casePath = join(dir, "case.bin");
  writeFileSync(casePath, fuzzCase);
  const base = o.command ?? [join(PACKAGE_DIR, "build", "abi_fuzz")];
  const command = [
    ...base,
    "--case",
    casePath,
    "--seed",
    String(seed),
    "--iterations",
    String(o.iterations ?? 400),
  ];
  const lines: AbiFuzzLine[] = [];
  let summary: Record<string, unknown> | null = null;
  let stderr = "";
  const { code, signal } = await new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    const child = spawn(command[0], command.slice(1), {
      env: { ...process.env, ...MULTICAST_OFF_ENV },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let buf = "";
    child.stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      let nl = buf.indexOf("\n");
      while (nl >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        nl = buf.indexOf("\n");
        if (!line.startsWith("{")) continue;
        try {
          const j = JSON.parse(line);
          if (j.summary) summary = j.summary;
          else lines.push(j as AbiFuzzLine);
        } catch {
          stderr += `unparsed: ${line}\n`;
        }
      }
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), o.timeoutMs ?? 240_000);
    child.on("error", (e) => {
      clearTimeout(timer);
      stderr += `cannot start ${command[0]}: ${e.message}\n`;
      resolve({ code: null, signal: null });
    });
    child.on("exit", (c, s) => {
      clearTimeout(timer);
      resolve({ code: c, signal: s });
    });
  });
  rmSync(dir, { recursive: true, force: true });
  const failures = lines.filter((l) => !l.ok);
  return {
    ok: code === 0 && signal === null && failures.length === 0 && summary !== null,
    command: portableCommand(command, dir),
    exitCode: code,
    signal,
    summary,
    calls: lines.length,
    failures: failures.slice(0, 40),
    lastCall: lines.at(-1) ?? null,
    stderr: stderr.slice(-4000),
    wallMs: Date.now() - t0,
  };
}

/**
 * The command as a report keeps it, with no path of the machine that ran it: the case's temporary
 * folder as `$TMPDIR/sy-abi-fuzz-XXXXXX`, and a path inside the repository relative to its root.
 */
export function portableCommand(command: readonly string[], caseDir: string): string[] {
  const root = join(PACKAGE_DIR, "..", "..");
  return command.map((a) => {
    if (a.startsWith(caseDir)) return `$TMPDIR/sy-abi-fuzz-XXXXXX${a.slice(caseDir.length)}`;
    const r = relative(root, a);
    return isAbsolute(a) && !r.startsWith("..") && !isAbsolute(r) ? r : a;
  });
}

/** The report in a few lines. */
export function formatAbiFuzz(r: AbiFuzzReport): string {
  const s = (r.summary ?? {}) as {
    refused?: number;
    accepted?: number;
    refusedBy?: Record<string, number>;
    mode?: string;
  };
  const by = Object.entries(s.refusedBy ?? {})
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
  const lines = [
    `${r.ok ? "PASS" : "FAIL"} abi-fuzz: ${r.calls} C ABI calls (${s.mode ?? "no summary"}), ${s.refused ?? "?"} refused (${by}), ` +
      `${s.accepted ?? "?"} accepted, ${r.failures.length} not as documented; exit ${r.signal ? `signal ${r.signal}` : r.exitCode}`,
  ];
  for (const f of r.failures.slice(0, 10))
    lines.push(`  ${f.call} (${f.case}): wanted ${f.want}, got ${f.got}: ${f.message}`);
  if (!r.ok && r.lastCall) lines.push(`  last call answered: ${r.lastCall.call} (${r.lastCall.case})`);
  if (!r.ok && r.stderr) lines.push(`  stderr: ${r.stderr.trim().split("\n").slice(-3).join(" | ")}`);
  return lines.join("\n");
}
