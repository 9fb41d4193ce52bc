// combine_send.wgsl: combine send on expert rank C.rank (core backend/reference/combineSend.ts).
//
// Each delivered row's expert output goes back to combineX[srcToken][slot] on every rank of the
// source's DP group; then one signal per home rank: combineSignal[C.rank] = (epoch, rows sent there).
// Which rows were delivered is this step's dispatch receive result; the dispatch signal words are
// read again and must be exactly those dispatch receive checked (a word that changed since is a
// late or duplicated signal), and each row's meta must name a token and slot of the world.
// Nothing is written anywhere unless every check passes.
// Dispatch order (host: stages/combineSend.ts): recheck (per heap window), rowinfo (per window of
// the meta's buffer), plan, then per home rank: put (per heap window and bf16 phase), signal.

/// Report, saved / rechk words, deliv [D], rowTok / rowSrc [D], cjobs [G, D], cArgs [G, 8], sent [G].
@group(0) @binding(2) var<storage, read_write> work: array<u32>;
@group(0) @binding(3) var<storage, read> workR: array<u32>;
/// recheck: this rank's heap; signal: the home rank's heap (window C.a), as atomics.
@group(0) @binding(4) var<storage, read_write> heapSig: array<atomic<u32>>;
/// The row meta: this rank's heap (masked dispatchMeta) or local buffer (contiguous recvMeta), window C.a.
@group(0) @binding(5) var<storage, read> rd: array<u32>;
/// Expert outputs in delivered order, bf16 rows padded to whole words: [D, ceil(H / 2)].
@group(0) @binding(6) var<storage, read> eout: array<u32>;
/// The home rank's heap (window C.a).
@group(0) @binding(7) var<storage, read_write> heap: array<u32>;

/// One invocation per dispatch signal word of this rank: read it again.
@compute @workgroup_size(WG)
fn recheck(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let q = lin(gid, nwg);
  if (q >= dispatch_signal_words()) {
    return;
  }
  let addr = dispatch_signal_addr(q);
  if (mine_a(addr)) {
    work[p(P_work_rechk) + q] = atomicLoad(&heapSig[at_a(addr)]);
  }
}

/// One invocation per delivered row n: token * K + slot and source rank from its meta.
@compute @workgroup_size(WG)
fn rowinfo(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let n = lin(gid, nwg);
  if (n >= work[p(P_work_report) + 8u]) {
    return;
  }
  let row = work[p(P_work_deliv) + n];
  var start = p(P_dispatchMeta_offset) + row * 16u;
  if (contiguous()) {
    start = p(P_recvMeta_offset) + row * 16u;
  }
  if (!mine_a(start)) {
    return;
  }
  let src = rd[at_a(start)];
  let token = rd[at_a(start + 4u)];
  let slot = rd[at_a(start + 8u)];
  var tok = NONE;
  if (src < p(P_ranks) && token < p(P_maxTokensPerRank) && slot < p(P_topK)) {
    tok = token * p(P_topK) + slot;
  }
  work[p(P_work_rowTok) + n] = tok;
  work[p(P_work_rowSrc) + n] = src;
}

fn report(key: u32, code: u32, word: u32, a: u32, b: u32, c: u32) {
  let r = p(P_work_report);
  work[r] = key;
  work[r + 1u] = code;
  work[r + 2u] = word;
  work[r + 3u] = a;
  work[r + 4u] = b;
  work[r + 5u] = c;
}

/// The key core's check order gives dispatch signal word q (dispatch_recv's check_signals).
fn signal_key(q: u32) -> u32 {
  let L = p(P_localExperts);
  if (contiguous()) {
    return (q / (L + 1u)) * (L + 2u) + q % (L + 1u);
  }
  return q;
}

/// One invocation: the checks, then each DP group's row list and indirect args; zero args on a fault.
@compute @workgroup_size(WG)
fn plan(@builtin(global_invocation_id) gid: vec3u) {
  if (gid.x != 0u) {
    return;
  }
  let G = p(P_dpGroups);
  let dp = p(P_dpSize);
  let Dmax = p(P_deliveredMax);
  let D = work[p(P_work_report) + 8u];
  report(NONE, 0u, 0u, 0u, 0u, 0u);
  var fault = false;
  for (var q = 0u; q < dispatch_signal_words(); q++) {
    let cur = work[p(P_work_rechk) + q];
    let old = work[p(P_work_saved) + q];
    if (cur != old) {
      report(signal_key(q), FAULT_CHANGED, cur, old, 0u, 0u);
      fault = true;
      break;
    }
  }
  if (!fault) {
    for (var n = 0u; n < D; n++) {
      if (work[p(P_work_rowTok) + n] == NONE) {
        let row = work[p(P_work_deliv) + n];
        report(META_KEY + n, FAULT_META, row, work[p(P_work_rowSrc) + n], 0u, 0u);
        fault = true;
        break;
      }
    }
  }
  for (var g = 0u; g < G; g++) {
    var cnt = 0u;
    if (!fault) {
      for (var n = 0u; n < D; n++) {
        if (work[p(P_work_rowSrc) + n] / dp == g) {
          work[p(P_work_cjobs) + g * Dmax + cnt] = n;
          cnt++;
        }
      }
    }
    work[p(P_work_sent) + g] = cnt;
    let a = p(P_work_cArgs) + g * 8u;
    let y = min(cnt, MAX_GROUPS);
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

fn eout_bf16(e: u32) -> u32 {
  return half_of(eout[e >> 1u], e);
}

/// Delivered row n's expert output (word-aligned in eout) into combineX element a of the home's
/// heap: phase 0 the whole words, phases 1 / 2 a last / first element shared with a neighbour row.
fn put_row(n: u32, a: u32, first: u32, step: u32) {
  let H = p(P_hidden);
  let region = p(P_combineX_offset);
  let src = n * ((H + 1u) / 2u); // first word of the row in eout
  if (C.phase == 0u) {
    let w0 = (a + 1u) >> 1u;
    let d = at_a(region + w0 * 4u);
    let aligned = (a & 1u) == 0u;
    let words = (a + H - 2u * w0) >> 1u;
    for (var v = first; v < words; v += step) {
      if (aligned) {
        heap[d + v] = eout[src + v];
      } else {
        // destination word w0 + v holds row elements 2v + 1 and 2v + 2
        heap[d + v] = (eout[src + v] >> 16u) | (eout[src + v + 1u] << 16u);
      }
    }
  } else if (first == 0u) {
    if (C.phase == 1u && ((a + H) & 1u) == 1u) {
      let i = at_a(region + ((a + H - 1u) >> 1u) * 4u);
      heap[i] = (heap[i] & 0xffff0000u) | eout_bf16(2u * src + H - 1u);
    }
    if (C.phase == 2u && (a & 1u) == 1u) {
      let i = at_a(region + (a >> 1u) * 4u);
      heap[i] = (heap[i] & 0xffffu) | (eout_bf16(2u * src) << 16u);
    }
  }
}

/// Grid (indirect, cArgs of the home's group): y strides over the group's rows, the invocations
/// over a row's words.
@compute @workgroup_size(WG)
fn put(
  @builtin(workgroup_id) wg: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let H = p(P_hidden);
  let g = C.peer / p(P_dpSize);
  let cnt = workR[p(P_work_sent) + g];
  for (var j = wg.y; j < cnt; j += nwg.y) {
    let n = workR[p(P_work_cjobs) + g * p(P_deliveredMax) + j];
    let a = workR[p(P_work_rowTok) + n] * H;
    if (mine_a(p(P_combineX_offset) + (a >> 1u) * 4u)) {
      put_row(n, a, wg.x * WG + li, nwg.x * WG);
    }
  }
}

/// After the rows: this rank's signal word on home rank C.peer.
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
