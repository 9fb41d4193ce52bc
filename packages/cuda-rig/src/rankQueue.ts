/**
 * One queue per rank: `run(rank, fn)` starts `fn` once every earlier call of that rank has
 * settled (fulfilled or rejected), so a phase is checked, forwarded and advanced by one call at a
 * time; different ranks still run concurrently, as a world of ranks must.
 */
export class RankQueue {
  private readonly tails: Promise<unknown>[];

  constructor(ranks: number) {
    this.tails = Array.from({ length: ranks }, () => Promise.resolve());
  }

  run<T>(rank: number, fn: () => Promise<T>): Promise<T> {
    const next = this.tails[rank].then(fn);
    this.tails[rank] = next.catch(() => undefined);
    return next;
  }
}
