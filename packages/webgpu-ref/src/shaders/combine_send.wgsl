// combine_send.wgsl: combine send on expert rank C.rank (core backend/reference/combineSend.ts),
// after receive.wgsl read this step's signals and records again and checked them.
//
// combineWeights expert: for every record (s, j), token t: acc = 0 (fp32); for each entry in slot
// order acc = fp32(acc + fp32(w * out[row])); partial = bf16(acc), written to combineX[rank][t]
// on every rank of s's DP group. combineWeights home (P_combineAtHome): every entry (slot k) of
// the record writes out[row] as it is to combineX[t][k] on each of them. Then one signal per home
// rank: combineSignal[rank] = (epoch, records written there: partials, or tokens). Nothing is
// written unless receive.wgsl found no fault.
// Dispatch order (host: stages/combineSend.ts): receive.wgsl, plan, then per home rank: put
// (per heap window and bf16 phase), signal.

/// report, rrecs [R, M, W], entN [R, M, J], cjobs [G, jobs] (jobs: expert R M records, home
/// R M J entries), cArgs [G, 8], sent [G] records (the signal's count), sentRows [G] rows
/// (partials, or (token, slot) rows), cPuts [G] jobs put, lastJob the last job of a group naming
/// each row of combineX (expert [M] per token, home [M, K] per (token, slot)).
@group(0) @binding(2) var<storage, read_write> work: array<u32>;
@group(0) @binding(3) var<storage, read> workR: array<u32>;
/// The home rank's heap (window C.a), as atomics (signal).
@group(0) @binding(4) var<storage, read_write> heapSig: array<atomic<u32>>;
/// Expert outputs of the packed rows (receive.wgsl's packed index), bf16 padded to whole words: [P, ceil(H / 2)].
@group(0) @binding(6) var<storage, read> eout: array<u32>;
/// The home rank's heap (window C.a).
@group(0) @binding(7) var<storage, read_write> heap: array<u32>;

/// The jobs of record id = s M + j: expert one (the record, job id), home its n entries (job
/// id J + i for entry i).
fn jobs_of(id: u32) -> u32 {
  return select(1u, work[p(P_work_rrecs) + id * p(P_routeWords) + 1u], at_home());
}

/// The job's row of combineX: expert the token of record id, home (token, slot of entry i) as t K + k.
fn job_row(job: u32) -> u32 {
  if (!at_home()) {
    return work[p(P_work_rrecs) + job * p(P_routeWords)];
  }
  let J = p(P_slotsPerRank);
  let rec = p(P_work_rrecs) + (job / J) * p(P_routeWords);
  return work[rec] * p(P_topK) + work[rec + 3u + 4u * (job % J)];
}

/// One invocation: each DP group's jobs (expert: the records s M + j for the sources s of the
/// group, in order; home: their entries, in order), records per group (sent, for the signal),
/// rows per group (sentRows) and indirect args; zero args if receive.wgsl reported a fault. Two
/// jobs of a group naming one row of combineX (only a corrupt but accepted record does that)
/// write it once: only the last one is put, as core's sequential writes leave it.
@compute @workgroup_size(WG)
fn plan(@builtin(global_invocation_id) gid: vec3u) {
  if (gid.x != 0u) {
    return;
  }
  let G = p(P_dpGroups);
  let dp = p(P_dpSize);
  let M = p(P_maxTokensPerRank);
  let J = select(1u, p(P_slotsPerRank), at_home());
  let stride = p(P_jobsMax);
  let ok = work[p(P_work_report)] == NONE;
  let records = p(P_work_report) + REPORT_HEAD + p(P_localExperts) * (p(P_ranks) + 2u);
  let last = p(P_work_lastJob);
  for (var g = 0u; g < G; g++) {
    var cnt = 0u;
    var rows = 0u;
    for (var s = g * dp; s < (g + 1u) * dp && ok; s++) {
      for (var j = 0u; j < work[records + s]; j++) {
        let id = s * M + j;
        for (var i = 0u; i < jobs_of(id); i++) {
          work[last + job_row(id * J + i)] = id * J + i;
          rows++;
        }
        cnt++;
      }
    }
    var puts = 0u;
    for (var s = g * dp; s < (g + 1u) * dp && ok; s++) {
      for (var j = 0u; j < work[records + s]; j++) {
        let id = s * M + j;
        for (var i = 0u; i < jobs_of(id); i++) {
          if (work[last + job_row(id * J + i)] == id * J + i) {
            work[p(P_work_cjobs) + g * stride + puts] = id * J + i;
            puts++;
          }
        }
      }
    }
    work[p(P_work_sent) + g] = cnt;
    work[p(P_work_sentRows) + g] = rows;
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

/// Elements h and h + 1 of packed expert-output row n, bf16 bits (the second 0 unless h + 1 < H).
fn out_pair(n: u32, h: u32) -> vec2<u32> {
  let H = p(P_hidden);
  let e = 2u * ((H + 1u) / 2u) * n + h; // element of eout
  let word = eout[e >> 1u];
  if ((e & 1u) == 0u) {
    return vec2<u32>(word & 0xffffu, select(0u, word >> 16u, h + 1u < H));
  }
  return vec2<u32>(word >> 16u, select(0u, eout[(e >> 1u) + 1u] & 0xffffu, h + 1u < H));
}

/// Elements h and h + 1 (if h + 1 < H) of record id's partial, bf16 bits in the low and high half.
fn partial(id: u32, h: u32) -> u32 {
  let H = p(P_hidden);
  let rec = p(P_work_rrecs) + id * p(P_routeWords);
  let J = p(P_slotsPerRank);
  var acc0 = 0.0;
  var acc1 = 0.0;
  for (var i = 0u; i < workR[rec + 1u]; i++) {
    let w = bitcast<f32>(workR[rec + 5u + 4u * i]);
    let x = out_pair(workR[p(P_work_entN) + id * J + i], h);
    acc0 = acc0 + product(w, bf16_to_f32(x.x));
    acc1 = acc1 + product(w, bf16_to_f32(x.y));
  }
  var y = f32_bits_to_bf16(bitcast<u32>(acc0));
  if (h + 1u < H) {
    y |= f32_bits_to_bf16(bitcast<u32>(acc1)) << 16u;
  }
  return y;
}

/// Elements h and h + 1 (if h + 1 < H) of job's row: expert the record's partial, home the
/// entry's expert output as it is (job id J + i: entN's packed row of entry i of record id).
fn row_pair(job: u32, h: u32) -> u32 {
  if (at_home()) {
    let x = out_pair(workR[p(P_work_entN) + job], h);
    return x.x | (x.y << 16u);
  }
  return partial(job, h);
}

/// Job's row (row_pair) into combineX element a of the home's heap: phase 0 the whole words,
/// phases 1 / 2 a last / first element shared with a neighbour row.
fn put_row(job: u32, a: u32, first: u32, step: u32) {
  let H = p(P_hidden);
  let region = p(P_combineX_offset);
  if (C.phase == 0u) {
    let w0 = (a + 1u) >> 1u;
    let d = at_a(region + w0 * 4u);
    let odd = a & 1u; // 1: word w0 + v holds row elements 2v + 1 and 2v + 2
    let words = (a + H - 2u * w0) >> 1u;
    for (var v = first; v < words; v += step) {
      heap[d + v] = row_pair(job, 2u * v + odd);
    }
  } else if (first == 0u) {
    if (C.phase == 1u && ((a + H) & 1u) == 1u) {
      let i = at_a(region + ((a + H - 1u) >> 1u) * 4u);
      heap[i] = (heap[i] & 0xffff0000u) | row_pair(job, H - 1u);
    }
    if (C.phase == 2u && (a & 1u) == 1u) {
      let i = at_a(region + (a >> 1u) * 4u);
      heap[i] = (heap[i] & 0xffffu) | ((row_pair(job, 0u) & 0xffffu) << 16u);
    }
  }
}

/// Grid (indirect, cArgs of the home's group): y strides over the group's jobs, the invocations
/// over a row's words. The row of a job: expert combineX[rank][t], home combineX[t][k].
@compute @workgroup_size(WG)
fn put(
  @builtin(workgroup_id) wg: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let H = p(P_hidden);
  let g = C.peer / p(P_dpSize);
  let cnt = workR[p(P_work_cPuts) + g];
  for (var q = wg.y; q < cnt; q += nwg.y) {
    let job = workR[p(P_work_cjobs) + g * p(P_jobsMax) + q];
    var row = 0u;
    if (at_home()) {
      let J = p(P_slotsPerRank);
      let rec = p(P_work_rrecs) + (job / J) * p(P_routeWords);
      row = workR[rec] * p(P_topK) + workR[rec + 3u + 4u * (job % J)];
    } else {
      row = C.rank * p(P_maxTokensPerRank) + workR[p(P_work_rrecs) + job * p(P_routeWords)];
    }
    let a = row * H;
    if (mine_a(p(P_combineX_offset) + (a >> 1u) * 4u)) {
      put_row(job, a, wg.x * WG + li, nwg.x * WG);
    }
  }
}

/// After the rows: this rank's signal word on home rank C.peer (count: the records, i.e. tokens).
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
