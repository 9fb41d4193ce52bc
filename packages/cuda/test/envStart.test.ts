import { describe, expect, it } from "vitest";
import { parseLaunchEnv } from "../src/envStart.js";

describe("parseLaunchEnv", () => {
  it("reads torchrun's variables", () => {
    expect(
      parseLaunchEnv({
        RANK: "3",
        WORLD_SIZE: "8",
        LOCAL_RANK: "1",
        MASTER_ADDR: "10.0.0.2",
        MASTER_PORT: "29500",
      }),
    ).toEqual({
      rank: 3,
      worldSize: 8,
      localRank: 1,
      masterAddr: "10.0.0.2",
      port: 29500,
      source: "torchrun",
    });
  });

  it("reads Slurm's, with the launch node as rank 0's address", () => {
    expect(
      parseLaunchEnv({
        SLURM_PROCID: "5",
        SLURM_NTASKS: "16",
        SLURM_LOCALID: "1",
        SLURM_LAUNCH_NODE_IPADDR: "10.1.0.7",
      }),
    ).toEqual({ rank: 5, worldSize: 16, localRank: 1, masterAddr: "10.1.0.7", port: 29517, source: "slurm" });
  });

  it("reads Open MPI's, and SWITCHYARD_RENDEZVOUS_PORT over MASTER_PORT", () => {
    expect(
      parseLaunchEnv({
        OMPI_COMM_WORLD_RANK: "0",
        OMPI_COMM_WORLD_SIZE: "2",
        OMPI_COMM_WORLD_LOCAL_RANK: "0",
        MASTER_PORT: "1000",
        SWITCHYARD_RENDEZVOUS_PORT: "2000",
      }),
    ).toMatchObject({
      rank: 0,
      worldSize: 2,
      localRank: 0,
      masterAddr: "127.0.0.1",
      port: 2000,
      source: "mpi",
    });
  });

  it("refuses what it cannot use, naming the variable", () => {
    expect(() => parseLaunchEnv({})).toThrow(/no rank found/);
    expect(() => parseLaunchEnv({ RANK: "x", WORLD_SIZE: "2" })).toThrow(/RANK="x"/);
    expect(() => parseLaunchEnv({ RANK: "2", WORLD_SIZE: "2" })).toThrow(/rank 2 is outside a world of 2/);
    expect(() => parseLaunchEnv({ RANK: "0", WORLD_SIZE: "2", MASTER_PORT: "70000" })).toThrow(
      /not a TCP port/,
    );
  });
});
