// Expected fan-out of a token under uniform random top-K routing: how many distinct ranks (or
// hosts) a token reaches when its K distinct experts are drawn uniformly from E, and experts are
// laid out in equal consecutive groups (a rank's L = E / R experts; a host's E / hosts experts).

/**
 * C(E - g, K) / C(E, K): the probability that none of a token's K distinct experts, drawn
 * uniformly from E, falls in one given group of g experts. A product of K ratios, so no factorial
 * ever overflows.
 */
export function missProbability(experts: number, groupExperts: number, topK: number): number {
  if (!Number.isInteger(experts) || !Number.isInteger(groupExperts) || !Number.isInteger(topK)) {
    throw new RangeError("experts, groupExperts and topK must be integers");
  }
  if (topK < 0 || topK > experts || groupExperts < 0 || groupExperts > experts) {
    throw new RangeError(`need 0 <= topK <= experts and 0 <= groupExperts <= experts`);
  }
  let p = 1;
  for (let i = 0; i < topK; i++) {
    const num = experts - groupExperts - i;
    if (num <= 0) return 0;
    p *= num / (experts - i);
  }
  return p;
}

/** The probability that a token reaches one given group of `groupExperts` experts. */
export function hitProbability(experts: number, groupExperts: number, topK: number): number {
  return 1 - missProbability(experts, groupExperts, topK);
}

/**
 * Expected distinct groups a token reaches when E experts are split into `groups` equal groups:
 * groups · (1 − C(E − E/groups, K) / C(E, K)). With groups = R this is the distinct ranks of
 * protocol version 2 (rows a token sends); with groups = hosts, the distinct hosts.
 */
export function expectedDistinctGroups(experts: number, groups: number, topK: number): number {
  if (!Number.isInteger(groups) || groups < 1 || experts % groups !== 0) {
    throw new RangeError(`experts (${experts}) must split into ${groups} equal groups`);
  }
  return groups * hitProbability(experts, experts / groups, topK);
}
