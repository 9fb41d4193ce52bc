// dispatch_write.wgsl: the contiguous sender's continuation on source rank C.rank, once every
// rank's counts of this step are on its heap (core backend/reference/dispatchSend.ts,
// countsArrived and dispatchWrite). On a GPU the sender would wait for them in its kernel; the
// simulation runs this as soon as they are all there (host: stages/dispatchWrite.ts).
//
// Destination d's expert block e starts at base_d(e) = sum over e' < e of
// alignUp(sum over s of count[s][d L + e'], A), this rank's rows of it at
// base_d(e) + sum over s < src of count[s][d L + e]. Each record's payload goes once, to the
// row of its first entry in d's recvX / recvScales; then the record; then dispatchSignal[src].
// Dispatch order: counts (per heap window of this rank), arrived, then per destination put (per
// heap window and bf16 phase), signal. Bindings: send_rows.wgsl (inbox: the sender's kept copy).

/// One invocation per word of this rank's countSignal [R, E]: read it into cnt.
@compute @workgroup_size(WG)
fn counts(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let q = lin(gid, nwg);
  if (q >= p(P_ranks) * p(P_experts)) {
    return;
  }
  let addr = p(P_countSignal_offset) + q * 4u;
  if (mine_a(addr)) {
    work[p(P_work_cnt) + q] = atomicLoad(&heapSig[at_a(addr)]);
  }
}

/// One invocation: flag[0] = every count word carries this step's epoch; if so the first row of
/// this rank's rows for every global expert (first [E]) and the put args (wArgs [R, 8]), else
/// zero args (nothing moves; the host keeps the sender pending).
@compute @workgroup_size(WG)
fn arrived_all(@builtin(global_invocation_id) gid: vec3u) {
  if (gid.x != 0u) {
    return;
  }
  let R = p(P_ranks);
  let L = p(P_localExperts);
  let E = p(P_experts);
  let A = p(P_expertAlignment);
  var ok = 1u;
  for (var q = 0u; q < R * E; q++) {
    if (!arrived(work[p(P_work_cnt) + q], C.epoch)) {
      ok = 0u;
      break;
    }
  }
  work[p(P_work_flag)] = ok;
  for (var d = 0u; d < R; d++) {
    if (ok == 1u) {
      var base = 0u;
      for (var e = 0u; e < L; e++) {
        var before = 0u;
        var total = 0u;
        for (var s = 0u; s < R; s++) {
          let c = signal_count(work[p(P_work_cnt) + s * E + d * L + e]);
          if (s < C.rank) {
            before += c;
          }
          total += c;
        }
        work[p(P_work_first) + d * L + e] = base + before;
        base += align_up(total, A);
      }
    }
    write_args(p(P_work_wArgs) + d * 8u, work[p(P_work_sendRecs) + d] * ok);
  }
}

/// Grid (indirect, wArgs of C.peer): y strides over the destination's records, the invocations
/// over a row's words: payload and scales at the first entry's row, then the record.
@compute @workgroup_size(WG)
fn put(
  @builtin(workgroup_id) wg: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let d = C.peer;
  let L = p(P_localExperts);
  let M = p(P_maxTokensPerRank);
  let total = workR[p(P_work_sendRecs) + d];
  for (var j = wg.y; j < total; j += nwg.y) {
    let rec = p(P_work_recs) + (d * M + j) * p(P_routeWords);
    let row = workR[p(P_work_first) + d * L + workR[rec + 2u]] + workR[rec + 4u];
    put_row(p(P_recvX_offset), p(P_recvScales_offset), row, workR[rec], wg.x * WG + li, nwg.x * WG);
    put_record(rec, j, wg.x * WG + li, nwg.x * WG);
  }
}

/// After the rows and records: dispatchSignal[src] = records on rank C.peer (if the counts were in).
@compute @workgroup_size(WG)
fn signal(@builtin(global_invocation_id) gid: vec3u) {
  let addr = p(P_dispatchSignal_offset) + C.rank * 4u;
  if (gid.x != 0u || workR[p(P_work_flag)] == 0u || !mine_a(addr)) {
    return;
  }
  atomicStore(&heapSig[at_a(addr)], signal_word(C.epoch, workR[p(P_work_sendRecs) + C.peer]));
}
