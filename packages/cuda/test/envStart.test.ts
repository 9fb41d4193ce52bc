import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseLaunchEnv } from "../src/envStart.js";

const secret = (s: string) => new TextEncoder().encode(s);

describe("parseLaunchEnv", () => {
  it("reads torchrun's variables; the rendezvous port is MASTER_PORT + 17, never MASTER_PORT", () => {
    expect(
      parseLaunchEnv({
        RANK: "3",
        WORLD_SIZE: "8",
        LOCAL_RANK: "1",
        MASTER_ADDR: "10.0.0.2",
        MASTER_PORT: "29500",
        TORCHELASTIC_RUN_ID: "job-7",
      }),
    ).toEqual({
      rank: 3,
      worldSize: 8,
      localRank: 1,
      masterAddr: "10.0.0.2",
      port: 29517,
      source: "torchrun",
      secret: secret("TORCHELASTIC_RUN_ID=job-7"),
      secretSource: "TORCHELASTIC_RUN_ID",
    });
  });

  it("reads Slurm's, with the launch node as rank 0's address and the job and step as its identity", () => {
    expect(
      parseLaunchEnv({
        SLURM_PROCID: "5",
        SLURM_NTASKS: "16",
        SLURM_LOCALID: "1",
        SLURM_LAUNCH_NODE_IPADDR: "10.1.0.7",
        SLURM_JOB_ID: "4242",
        SLURM_STEP_ID: "0",
      }),
    ).toEqual({
      rank: 5,
      worldSize: 16,
      localRank: 1,
      masterAddr: "10.1.0.7",
      port: 29517,
      source: "slurm",
      secret: secret("SLURM_JOB_ID=4242.0"),
      secretSource: "SLURM_JOB_ID",
    });
  });

  it("reads Open MPI's, SWITCHYARD_RENDEZVOUS_PORT / _ADDR over MASTER_*, SWITCHYARD_JOB_SECRET over the launcher's ids", () => {
    expect(
      parseLaunchEnv({
        OMPI_COMM_WORLD_RANK: "0",
        OMPI_COMM_WORLD_SIZE: "2",
        OMPI_COMM_WORLD_LOCAL_RANK: "0",
        MASTER_PORT: "1000",
        MASTER_ADDR: "10.0.0.9",
        SWITCHYARD_RENDEZVOUS_PORT: "2000",
        SWITCHYARD_RENDEZVOUS_ADDR: "10.2.0.1",
        SWITCHYARD_JOB_SECRET: "s3cret",
        PMIX_NAMESPACE: "prterun-x-1@1",
      }),
    ).toMatchObject({
      rank: 0,
      worldSize: 2,
      localRank: 0,
      masterAddr: "10.2.0.1",
      port: 2000,
      source: "mpi",
      secretSource: "SWITCHYARD_JOB_SECRET",
    });
  });

  it("refuses what it cannot use, naming the variable", () => {
    const job = { SWITCHYARD_JOB_SECRET: "x" };
    expect(() => parseLaunchEnv({})).toThrow(/no rank found/);
    expect(() => parseLaunchEnv({ ...job, RANK: "x", WORLD_SIZE: "2" })).toThrow(/RANK="x"/);
    expect(() => parseLaunchEnv({ ...job, RANK: "2", WORLD_SIZE: "2" })).toThrow(
      /rank 2 is outside a world of 2/,
    );
    expect(() => parseLaunchEnv({ ...job, RANK: "0", WORLD_SIZE: "2", MASTER_PORT: "65530" })).toThrow(
      /\(MASTER_PORT \+ 17\) = 65547 is not a TCP port/,
    );
  });

  it("refuses a world of several ranks without a job secret (torchrun's run id 'none' is none)", () => {
    expect(() => parseLaunchEnv({ RANK: "0", WORLD_SIZE: "2", TORCHELASTIC_RUN_ID: "none" })).toThrow(
      /no job secret for the rendezvous of 2 ranks; set SWITCHYARD_JOB_SECRET/,
    );
    expect(parseLaunchEnv({ RANK: "0", WORLD_SIZE: "1" }).secret).toBeNull();
  });
});

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

function runNode(script: string, env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number | null; signal: string | null; out: string; err: string }>((resolve) => {
    const child = spawn(process.execPath, [script], { env: { ...process.env, ...env } });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("exit", (code, signal) => resolve({ code, signal, out, err }));
  });
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

describe("startFromEnv's order: the id is shared before any blocking collective", () => {
  for (const world of [2, 4]) {
    it(`${world} ranks with a stand-in blocking init all start (no deadlock)`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "switchyard-env-"));
      try {
        const port = String(await freePort());
        const runs = await Promise.all(
          Array.from({ length: world }, (_, rank) =>
            runNode(fixture("envRank.mjs"), {
              RANK: String(rank),
              WORLD_SIZE: String(world),
              MASTER_ADDR: "127.0.0.1",
              SWITCHYARD_RENDEZVOUS_PORT: port,
              SWITCHYARD_JOB_SECRET: "env-start-test",
              STANDIN_DIR: dir,
            }),
          ),
        );
        runs.forEach((r, rank) => {
          expect(r.err).toBe("");
          expect(r.code).toBe(0);
          expect(JSON.parse(r.out)).toEqual({ rank, idByte: 42 });
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});

describe("runBounded", () => {
  it("kills a process whose blocking call outlives the bound, saying what and how long", async () => {
    const r = await runNode(fixture("blockingCall.mjs"), { BOUND_MS: "300", BLOCK_MS: "5000" });
    expect(r.signal).toBe("SIGKILL");
    expect(r.err).toMatch(/stand-in collective did not finish within 300 ms/);
  });

  it("lets a call that returns in time through", async () => {
    const r = await runNode(fixture("blockingCall.mjs"), { BOUND_MS: "5000", BLOCK_MS: "10" });
    expect(r).toMatchObject({ code: 0, out: "returned" });
  });
});
