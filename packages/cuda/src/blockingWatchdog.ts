import { Worker } from "node:worker_threads";

/** The watchdog thread: waits on a shared flag, and if `fn` has not set it in time, reports and kills the process. */
const WATCHDOG = `const { workerData } = require("node:worker_threads");
const flag = new Int32Array(workerData.flag);
if (Atomics.wait(flag, 0, 0, workerData.ms) === "timed-out") {
  require("node:fs").writeSync(2, workerData.message);
  process.kill(process.pid, "SIGKILL");
}`;

/**
 * Runs `fn`, a call that blocks the JavaScript thread (NVSHMEM's collective init and allocation
 * run on it in the environment-driven start), under a watchdog thread: if `fn` has not returned
 * within `ms`, the watchdog writes "`what` did not finish within `ms` ms" to stderr and kills the
 * process with SIGKILL, since no JavaScript on the blocked thread (a timer, a signal handler) can
 * run any more. The launcher (torchrun, srun, mpirun) then sees the rank exit and ends the job,
 * instead of every rank waiting forever for one that never joins.
 */
export function runBounded<T>(what: string, ms: number, fn: () => T): T {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const message =
    `switchyard: ${what} did not finish within ${ms} ms; the process is killed because the call ` +
    "blocks its thread. Check that every rank started and reached it, or raise the collective timeout.\n";
  const worker = new Worker(WATCHDOG, { eval: true, workerData: { flag: flag.buffer, ms, message } });
  worker.unref();
  try {
    return fn();
  } finally {
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
    void worker.terminate();
  }
}
