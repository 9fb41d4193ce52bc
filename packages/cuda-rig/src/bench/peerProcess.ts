import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { type PeerLine, parsePeerLine } from "./peerLines.js";

export interface PeerProcessOptions {
  /** The Python interpreter (`--python`). */
  python: string;
  /** bench-peers/peers.py, or a stand-in in tests. */
  script: string;
  /** The folder writePeerInputs filled. */
  inputs: string;
  impl: string;
  /** The whole run, start to exit: past it the process group is killed. */
  timeoutMs: number;
  onLine(line: PeerLine): void;
}

/** How the peer script ended. */
export interface PeerProcessEnd {
  code: number | null;
  signal: string | null;
  timedOut: boolean;
  /** Why it could not start (the interpreter missing), else null. */
  spawnError: string | null;
  /** The last lines of stderr and of unparsable stdout, for the reason of a failed run. */
  tail: string;
}

/** Never NVLink multicast in any process the bench starts. */
export const PEER_ENV = {
  NVSHMEM_DISABLE_NVLS: "1",
  NCCL_NVLS_ENABLE: "0",
  TORCH_SYMM_MEM_DISABLE_MULTICAST: "1",
};

/**
 * Runs `python peers.py --inputs DIR --peer IMPL` in its own process group, passes every message
 * line to `onLine` as it arrives, and kills the group (the per-GPU processes too) at `timeoutMs`.
 */
export function runPeerProcess(o: PeerProcessOptions): Promise<PeerProcessEnd> {
  return new Promise((resolve) => {
    const tail: string[] = [];
    const keep = (s: string) => {
      tail.push(s);
      if (tail.length > 12) tail.shift();
    };
    const child = spawn(o.python, [o.script, "--inputs", o.inputs, "--peer", o.impl], {
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
      env: { ...process.env, ...PEER_ENV, PYTHONUNBUFFERED: "1", PYTHONDONTWRITEBYTECODE: "1" },
    });
    let timedOut = false;
    let spawnError: string | null = null;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, o.timeoutMs);
    createInterface({ input: child.stdout }).on("line", (line) => {
      try {
        const msg = parsePeerLine(line);
        if (msg) o.onLine(msg);
        else if (line.trim()) keep(line);
      } catch (e) {
        keep((e as Error).message);
      }
    });
    createInterface({ input: child.stderr }).on("line", (line) => {
      if (line.trim()) keep(line);
    });
    child.on("error", (e) => {
      spawnError = `${o.python}: ${e.message}`;
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, timedOut, spawnError, tail: tail.join("\n") });
    });
  });
}
