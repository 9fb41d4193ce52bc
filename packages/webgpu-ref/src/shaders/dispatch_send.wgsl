// dispatch_send.wgsl: dispatch send on source rank C.rank (core backend/reference/dispatchSend.ts).
//
// One route record per (token this rank owns, destination rank its used slots name), in token
// order, listing the token's slots on that rank in slot order (docs/protocol.md).
//   masked:     payload, scales and record j -> dispatchX / dispatchScales / dispatchRoutes[src][j]
//               of the destination; then countSignal[src][e] per local expert, dispatchSignal[src].
//   contiguous: only the counts move here: countSignal[src][g] for all E experts on every rank
//               (`announce`); the rows follow in dispatch_write.wgsl once every rank's counts are in.
// Dispatch order (host: stages/dispatchSend.ts): amax and encode (bf16 -> fp8 only; the parameter
// block's scaleFormat picks the rule), route, then masked: per destination put (per heap window
// and bf16 phase), signal; contiguous: announce.
// Bindings: send_rows.wgsl.

/// Quantise-on-dispatch, step 1: one invocation per (token, block of 128): the block's scale from
/// the largest finite |x| (bf16 magnitudes order like their bits) into payloadScales [T, S]: 2^s
/// (pow2, ue8m0), or fl32(a * fl32(1/448)) and the block's fl32(448 / a) into payloadRecips [T, S] (amax).
@compute @workgroup_size(WG)
fn amax(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let S = p(P_scalesPerRow);
  let i = lin(gid, nwg);
  if (i >= C.tokens * S) {
    return;
  }
  let first = p(P_inbox_x) + i * 64u; // block i of x [T, H] starts at element 128 i
  var m = 0u;
  for (var j = 0u; j < 64u; j++) {
    let w = inbox[first + j];
    let lo = w & 0x7fffu;
    let hi = (w >> 16u) & 0x7fffu;
    if (lo < 0x7f80u) {
      m = max(m, lo);
    }
    if (hi < 0x7f80u) {
      m = max(m, hi);
    }
  }
  if (p(P_scaleFormat) == SCALE_FORMAT_AMAX) {
    let a = amax_a_bits(m);
    inbox[p(P_inbox_payloadScales) + i] = amax_scale_bits(a);
    inbox[p(P_inbox_payloadRecips) + i] = amax_recip_bits(a);
  } else {
    inbox[p(P_inbox_payloadScales) + i] = fp8_scale_bits(fp8_scale_exp(m));
  }
}

/// Quantise-on-dispatch, step 2: workgroup y strides over tokens, invocations over the row's fp8
/// words (4 elements each), each divided by its block's 2^s (pow2, ue8m0) or multiplied by its
/// block's reciprocal (amax): payload [T, H] fp8.
@compute @workgroup_size(WG)
fn encode(
  @builtin(workgroup_id) wg: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let H = p(P_hidden);
  let S = p(P_scalesPerRow);
  let amax_format = p(P_scaleFormat) == SCALE_FORMAT_AMAX;
  for (var t = wg.y; t < C.tokens; t += nwg.y) {
    let xrow = p(P_inbox_x) + t * (H / 2u);
    let qrow = p(P_inbox_payload) + t * (H / 4u);
    for (var v = wg.x * WG + li; v < H / 4u; v += nwg.x * WG) {
      let a = inbox[xrow + 2u * v];
      let b = inbox[xrow + 2u * v + 1u];
      if (amax_format) {
        let r = inbox[p(P_inbox_payloadRecips) + t * S + (v >> 5u)];
        inbox[qrow + v] = fp8_encode_amax(a & 0xffffu, r) | (fp8_encode_amax(a >> 16u, r) << 8u) |
          (fp8_encode_amax(b & 0xffffu, r) << 16u) | (fp8_encode_amax(b >> 16u, r) << 24u);
      } else {
        let s = i32(inbox[p(P_inbox_payloadScales) + t * S + (v >> 5u)] >> 23u) - 127;
        inbox[qrow + v] = fp8_encode_bf16(a & 0xffffu, s) | (fp8_encode_bf16(a >> 16u, s) << 8u) |
          (fp8_encode_bf16(b & 0xffffu, s) << 16u) | (fp8_encode_bf16(b >> 16u, s) << 24u);
      }
    }
  }
}

/// One invocation per destination rank d: its route records (recs[d][j], tokens this rank owns,
/// t % dpSize == rank % dpSize, ascending), rows per expert of d (sendCounts[d * L + e]), records
/// (sendRecs[d]) and put args (sendArgs[d]).
@compute @workgroup_size(WG)
fn route(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let d = lin(gid, nwg);
  let R = p(P_ranks);
  if (d >= R) {
    return;
  }
  let L = p(P_localExperts);
  let K = p(P_topK);
  let M = p(P_maxTokensPerRank);
  let W = p(P_routeWords);
  let dp = p(P_dpSize);
  let counts = p(P_work_sendCounts) + d * L;
  for (var e = 0u; e < L; e++) {
    work[counts + e] = 0u;
  }
  var j = 0u;
  for (var t = C.rank % dp; t < C.tokens; t += dp) {
    let rec = p(P_work_recs) + (d * M + j) * W;
    var n = 0u;
    for (var k = 0u; k < K; k++) {
      let g = work[p(P_work_topkIdx) + t * K + k];
      if (g == 0xffffffffu || g / L != d) {
        continue;
      }
      let e = g % L;
      let at = rec + record_words(n);
      work[at] = e;
      work[at + 1u] = k;
      work[at + 2u] = work[counts + e];
      work[at + 3u] = work[p(P_work_topkWeights) + t * K + k];
      work[counts + e] += 1u;
      n++;
    }
    if (n > 0u) {
      work[rec] = t;
      work[rec + 1u] = n;
      j++;
    }
  }
  work[p(P_work_sendRecs) + d] = j;
  write_args(p(P_work_sendArgs) + d * 8u, j);
}

/// masked. Grid (indirect, sendArgs of C.peer): y strides over the destination's records, the
/// invocations (and x) over a row's words: record j -> row C.rank * M + j of dispatchX / Scales / Routes.
@compute @workgroup_size(WG)
fn put(
  @builtin(workgroup_id) wg: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let d = C.peer;
  let M = p(P_maxTokensPerRank);
  let total = workR[p(P_work_sendRecs) + d];
  for (var j = wg.y; j < total; j += nwg.y) {
    let rec = p(P_work_recs) + (d * M + j) * p(P_routeWords);
    let row = C.rank * M + j;
    let t = workR[rec];
    put_row(p(P_dispatchX_offset), p(P_dispatchScales_offset), row, t, wg.x * WG + li, nwg.x * WG);
    put_record(rec, j, wg.x * WG + li, nwg.x * WG);
  }
}

/// masked, after the rows: one invocation per signal word this rank owes destination C.peer:
/// countSignal[src][e] for its L local experts, then dispatchSignal[src] (records).
@compute @workgroup_size(WG)
fn signal(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = lin(gid, nwg);
  let L = p(P_localExperts);
  let d = C.peer;
  if (e > L) {
    return;
  }
  var addr = p(P_dispatchSignal_offset) + C.rank * 4u;
  var n = workR[p(P_work_sendRecs) + d];
  if (e < L) {
    addr = p(P_countSignal_offset) + (C.rank * L + e) * 4u;
    n = workR[p(P_work_sendCounts) + d * L + e];
  }
  if (mine_a(addr)) {
    atomicStore(&heapSig[at_a(addr)], signal_word(C.epoch, n));
  }
}

/// contiguous: one invocation per global expert g: countSignal[src][g] on rank C.peer.
@compute @workgroup_size(WG)
fn announce(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let g = lin(gid, nwg);
  let E = p(P_experts);
  if (g >= E) {
    return;
  }
  let addr = p(P_countSignal_offset) + (C.rank * E + g) * 4u;
  if (mine_a(addr)) {
    atomicStore(&heapSig[at_a(addr)], signal_word(C.epoch, workR[p(P_work_sendCounts) + g]));
  }
}
