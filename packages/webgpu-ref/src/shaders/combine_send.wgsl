// combine_send.wgsl: combine send on expert rank C.rank (core backend/reference/combineSend.ts),
// after receive.wgsl read this step's signals and records again and checked them.
//
// For every record (s, j), token t: acc = 0 (fp32); for each entry in slot order
// acc = fp32(acc + fp32(w * out[row])); partial = bf16(acc), written to combineX[rank][t] on
// every rank of s's DP group; then one signal per home rank: combineSignal[rank] = (epoch,
// partials written there). Nothing is written unless receive.wgsl found no fault.
// Dispatch order (host: stages/combineSend.ts): receive.wgsl, plan, then per home rank: put
// (per heap window and bf16 phase), signal.

/// report, rrecs [R, M, W], entN [R, M, J], cjobs [G, R M], cArgs [G, 8], sent [G] partials,
/// cPuts [G] rows put, lastJob [M] the last record of a group naming each token.
@group(0) @binding(2) var<storage, read_write> work: array<u32>;
@group(0) @binding(3) var<storage, read> workR: array<u32>;
/// The home rank's heap (window C.a), as atomics (signal).
@group(0) @binding(4) var<storage, read_write> heapSig: array<atomic<u32>>;
/// Expert outputs of the packed rows (receive.wgsl's packed index), bf16 padded to whole words: [P, ceil(H / 2)].
@group(0) @binding(6) var<storage, read> eout: array<u32>;
/// The home rank's heap (window C.a).
@group(0) @binding(7) var<storage, read_write> heap: array<u32>;

/// One invocation: each DP group's records (s M + j for the sources s of the group, in order),
/// partials per group (sent, for the signal) and indirect args; zero args if receive.wgsl
/// reported a fault. Two records naming one token of a group (a corrupt but accepted record) write
/// one row: only the last one is put, as core's sequential writes leave it.
@compute @workgroup_size(WG)
fn plan(@builtin(global_invocation_id) gid: vec3u) {
  if (gid.x != 0u) {
    return;
  }
  let G = p(P_dpGroups);
  let dp = p(P_dpSize);
  let M = p(P_maxTokensPerRank);
  let W = p(P_routeWords);
  let stride = p(P_recordsMax);
  let ok = work[p(P_work_report)] == NONE;
  let records = p(P_work_report) + REPORT_HEAD + p(P_localExperts) * (p(P_ranks) + 2u);
  let last = p(P_work_lastJob);
  for (var g = 0u; g < G; g++) {
    var cnt = 0u;
    for (var s = g * dp; s < (g + 1u) * dp && ok; s++) {
      for (var j = 0u; j < work[records + s]; j++) {
        work[last + work[p(P_work_rrecs) + (s * M + j) * W]] = s * M + j;
        cnt++;
      }
    }
    var puts = 0u;
    for (var s = g * dp; s < (g + 1u) * dp && ok; s++) {
      for (var j = 0u; j < work[records + s]; j++) {
        if (work[last + work[p(P_work_rrecs) + (s * M + j) * W]] == s * M + j) {
          work[p(P_work_cjobs) + g * stride + puts] = s * M + j;
          puts++;
        }
      }
    }
    work[p(P_work_sent) + g] = cnt;
    work[p(P_work_cPuts) + g] = puts;
    let a = p(P_work_cArgs) + g * 8u;
    let y = min(puts, MAX_GROUPS);
    work[a] = C.groups;
    work[a + 1u] = y;
    work[a + 2u] = 1u;
    work[a + 3u] = 0u;
    work[a + 4u] = 1u;
    work[a + 5u] = y;
    work[a + 6u] = 1u;
    work[a + 7u] = 0u;
  }
}

/// fp32(w * x), rounded on its own: the OR with the runtime zero keeps a compiler from fusing it
/// into the following add (core's rule: separate multiply and add, no FMA contraction).
fn product(w: f32, x: f32) -> f32 {
  return bitcast<f32>(bitcast<u32>(w * x) | C.zero);
}

/// Elements h and h + 1 (if h + 1 < H) of record id's partial, bf16 bits in the low and high half.
fn partial(id: u32, h: u32) -> u32 {
  let H = p(P_hidden);
  let rec = p(P_work_rrecs) + id * p(P_routeWords);
  let J = p(P_slotsPerRank);
  let PWo = (H + 1u) / 2u;
  let second = h + 1u < H;
  var acc0 = 0.0;
  var acc1 = 0.0;
  for (var i = 0u; i < workR[rec + 1u]; i++) {
    let w = bitcast<f32>(workR[rec + 5u + 4u * i]);
    let e = 2u * PWo * workR[p(P_work_entN) + id * J + i] + h; // element of eout
    let word = eout[e >> 1u];
    var x0 = word & 0xffffu;
    var x1 = word >> 16u;
    if ((e & 1u) == 1u) {
      x0 = x1;
      x1 = select(0u, eout[(e >> 1u) + 1u] & 0xffffu, second);
    }
    acc0 = acc0 + product(w, bf16_to_f32(x0));
    acc1 = acc1 + product(w, bf16_to_f32(x1));
  }
  var y = f32_bits_to_bf16(bitcast<u32>(acc0));
  if (second) {
    y |= f32_bits_to_bf16(bitcast<u32>(acc1)) << 16u;
  }
  return y;
}

/// Record id's partial into combineX element a of the home's heap: phase 0 the whole words,
/// phases 1 / 2 a last / first element shared with a neighbour row.
fn put_row(id: u32, a: u32, first: u32, step: u32) {
  let H = p(P_hidden);
  let region = p(P_combineX_offset);
  if (C.phase == 0u) {
    let w0 = (a + 1u) >> 1u;
    let d = at_a(region + w0 * 4u);
    let odd = a & 1u; // 1: word w0 + v holds row elements 2v + 1 and 2v + 2
    let words = (a + H - 2u * w0) >> 1u;
    for (var v = first; v < words; v += step) {
      heap[d + v] = partial(id, 2u * v + odd);
    }
  } else if (first == 0u) {
    if (C.phase == 1u && ((a + H) & 1u) == 1u) {
      let i = at_a(region + ((a + H - 1u) >> 1u) * 4u);
      heap[i] = (heap[i] & 0xffff0000u) | partial(id, H - 1u);
    }
    if (C.phase == 2u && (a & 1u) == 1u) {
      let i = at_a(region + (a >> 1u) * 4u);
      heap[i] = (heap[i] & 0xffffu) | ((partial(id, 0u) & 0xffffu) << 16u);
    }
  }
}

/// Grid (indirect, cArgs of the home's group): y strides over the group's records, the
/// invocations over a row's words.
@compute @workgroup_size(WG)
fn put(
  @builtin(workgroup_id) wg: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let H = p(P_hidden);
  let M = p(P_maxTokensPerRank);
  let g = C.peer / p(P_dpSize);
  let cnt = workR[p(P_work_cPuts) + g];
  for (var q = wg.y; q < cnt; q += nwg.y) {
    let id = workR[p(P_work_cjobs) + g * p(P_recordsMax) + q];
    let token = workR[p(P_work_rrecs) + id * p(P_routeWords)];
    let a = (C.rank * M + token) * H;
    if (mine_a(p(P_combineX_offset) + (a >> 1u) * 4u)) {
      put_row(id, a, wg.x * WG + li, nwg.x * WG);
    }
  }
}

/// After the partials: this rank's signal word on home rank C.peer.
@compute @workgroup_size(WG)
fn signal(@builtin(global_invocation_id) gid: vec3u) {
  if (gid.x != 0u || workR[p(P_work_report)] != NONE) {
    return;
  }
  let addr = p(P_combineSignal_offset) + C.rank * 4u;
  if (mine_a(addr)) {
    let g = C.peer / p(P_dpSize);
    atomicStore(&heapSig[at_a(addr)], signal_word(C.epoch, workR[p(P_work_sent) + g]));
  }
}
