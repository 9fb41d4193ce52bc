// combine_recv.wgsl: combine receive on home rank C.rank (core backend/reference/combineRecv.ts).
//
// Checks every expert rank's signal word (missing, stale, malformed, more than M*K rows) and that
// each announces the rows this rank's used slots route to it; then, for each token, sums its K slot
// rows of combineX weighted by the router (fp32, slot order k = 0..K-1, unused slots skipped) and
// rounds once to bf16: y [T, H], written to the outbox with rows padded to whole words.
// Dispatch order (host: stages/combineRecv.ts): check (per heap window), total, sum (per heap window).

/// Report, routing [M, K] (i32) and weights [M, K] (f32), combineCounts [R] (the words as read),
/// combineExpected [R].
@group(0) @binding(2) var<storage, read_write> work: array<u32>;
@group(0) @binding(3) var<storage, read> workR: array<u32>;
/// This rank's heap (window C.a): signals as atomics, combineX [M, K, H] bf16 as words.
@group(0) @binding(4) var<storage, read_write> heapSig: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read> rd: array<u32>;
/// y [T, ceil(H / 2)] words.
@group(0) @binding(6) var<storage, read_write> outbox: array<u32>;

/// One invocation per expert rank: read its signal word.
@compute @workgroup_size(WG)
fn check(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let peer = lin(gid, nwg);
  if (peer >= p(P_ranks)) {
    return;
  }
  let addr = p(P_combineSignal_offset) + peer * 4u;
  if (mine_a(addr)) {
    work[p(P_work_combineCounts) + peer] = atomicLoad(&heapSig[at_a(addr)]);
  }
}

/// One invocation: the words in peer order, then each expert rank's rows against the used slots
/// this rank's tokens route to it (peer order).
@compute @workgroup_size(WG)
fn total(@builtin(global_invocation_id) gid: vec3u) {
  if (gid.x != 0u) {
    return;
  }
  let R = p(P_ranks);
  let K = p(P_topK);
  let L = p(P_localExperts);
  let r = p(P_work_report);
  let maxRows = p(P_maxTokensPerRank) * K;
  for (var i = 0u; i < 8u; i++) {
    work[r + i] = 0u;
  }
  work[r] = NONE;
  for (var peer = 0u; peer < R; peer++) {
    let w = work[p(P_work_combineCounts) + peer];
    let f = signal_fault(w, C.epoch, maxRows);
    if (f != 0u) {
      work[r] = peer;
      work[r + 1u] = f;
      work[r + 2u] = w;
      work[r + 3u] = maxRows;
      return;
    }
  }
  let expected = p(P_work_combineExpected);
  for (var peer = 0u; peer < R; peer++) {
    work[expected + peer] = 0u;
  }
  for (var i = 0u; i < C.tokens * K; i++) {
    let e = work[p(P_work_topkIdx) + i];
    if (e != 0xffffffffu) {
      work[expected + e / L] += 1u;
    }
  }
  for (var peer = 0u; peer < R; peer++) {
    let w = work[p(P_work_combineCounts) + peer];
    if (signal_count(w) != work[expected + peer]) {
      work[r] = peer;
      work[r + 1u] = FAULT_ROWS;
      work[r + 2u] = w;
      work[r + 3u] = signal_count(w);
      work[r + 4u] = work[expected + peer];
      return;
    }
  }
}

/// fp32(w * x), rounded on its own: the OR with the runtime zero keeps a compiler from fusing it
/// into the following add (core's rule: separate multiply and add, no FMA contraction).
fn product(w: f32, x: f32) -> f32 {
  return bitcast<f32>(bitcast<u32>(w * x) | C.zero);
}

/// Workgroup y strides over tokens, invocations over the words of the token's y row (two elements each).
@compute @workgroup_size(WG)
fn sum(
  @builtin(workgroup_id) wg: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let H = p(P_hidden);
  let K = p(P_topK);
  let PWo = (H + 1u) / 2u;
  if (workR[p(P_work_report)] != NONE) {
    return;
  }
  for (var t = wg.y; t < C.tokens; t += nwg.y) {
    if (!mine_a(p(P_combineX_offset) + ((t * K * H) >> 1u) * 4u)) {
      continue;
    }
    let base = at_a(p(P_combineX_offset));
    for (var v = wg.x * WG + li; v < PWo; v += nwg.x * WG) {
      let h = 2u * v;
      let second = h + 1u < H;
      var acc0 = 0.0;
      var acc1 = 0.0;
      for (var k = 0u; k < K; k++) {
        let slot = t * K + k;
        if (workR[p(P_work_topkIdx) + slot] == 0xffffffffu) {
          continue;
        }
        let w = bitcast<f32>(workR[p(P_work_topkWeights) + slot]);
        let e = slot * H + h; // element of combineX
        let word = rd[base + (e >> 1u)];
        var x0 = word & 0xffffu;
        var x1 = word >> 16u;
        if ((e & 1u) == 1u) {
          x0 = x1;
          x1 = rd[base + (e >> 1u) + 1u] & 0xffffu;
        }
        acc0 = acc0 + product(w, bf16_to_f32(x0));
        if (second) {
          acc1 = acc1 + product(w, bf16_to_f32(x1));
        }
      }
      var y = f32_bits_to_bf16(bitcast<u32>(acc0));
      if (second) {
        y |= f32_bits_to_bf16(bitcast<u32>(acc1)) << 16u;
      }
      outbox[t * PWo + v] = y;
    }
  }
}
