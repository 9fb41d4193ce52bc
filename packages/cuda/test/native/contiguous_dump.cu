// Host program: runs the contiguous layout's index arithmetic (bench/native/kernels/contiguous.cuh,
// compiled for the host) the way the kernels use it, for every rank of a world, and prints each
// rank's dispatch output structure, so test/contiguous.native.test.ts can compare it with core's
// reference protocol.
//
// It follows the kernels step by step: route (bench/native/kernels/route.cu: per-chunk bit masks per (expert,
// warp), prefixes, ranks by popcount, chunk prefixes, per-destination bases), staging rows
// (dispatch_send_contiguous.cu: [dst][src * C + routeRow]), signals, receive tables
// (dispatch_recv_contiguous.cu: expertRows, paddedOffsets, fillExpertTables, fillSourceTables) and
// compaction (sourceOfRow). The CUDA-specific parts (atomics, barriers, stores) are what it does not test.
// With Q > 0 it follows bounded staging instead (dispatch_send_rounds.cu, dispatch_recv_rounds.cu):
// round k carries tokens [kQ, (k+1)Q), at most Cq = Q * min(K, L) rows per (source, destination),
// each row with its index routeRow - regionBase; the receiver writes it to pairStart[e][s] + index
// and the padding rows separately.
//
// stdin:  R L K M align dp warps Q, then per source rank: T, then T * K expert ids (-1 = unused).
// stdout: per destination rank: "rank r", "counts" L*R ints ([e][s]), "offsets" L+1 ints,
//         then offsets[L] lines "srcRank srcToken slot localExpert"; or "error <what>".
#include <cstdio>
#include <vector>

#include "../../bench/native/kernels/contiguous.cuh"

using sy::SyContig;

int main() {
  int R, L, K, M, align, dp, W, Q;
  if (std::scanf("%d %d %d %d %d %d %d %d", &R, &L, &K, &M, &align, &dp, &W, &Q) != 8) return 2;
  const int E = R * L;
  const int C = M * (K < L ? K : L);
  const int CT = 32 * W;
  const int Cq = Q * (K < L ? K : L);
  // Bounded staging: what each destination receives, (src, token, slot, expert, index, round).
  struct Staged {
    int src, t, k, e, index, round;
  };
  std::vector<std::vector<Staged>> rounds(R);
  // staging[dst][row] = meta (4 ints), row < R * C; -2 marks "never written".
  std::vector<std::vector<int>> staging(R, std::vector<int>(static_cast<size_t>(R) * C * 4, -2));
  std::vector<std::vector<int>> countSignal(R, std::vector<int>(E, -1));  // [dst][src * L + e]
  std::vector<std::vector<int>> doneSignal(R, std::vector<int>(R, -1));   // [dst][src]
  for (int src = 0; src < R; ++src) {
    int T;
    if (std::scanf("%d", &T) != 1) return 2;
    std::vector<int> idx(static_cast<size_t>(T) * K);
    for (int& v : idx) std::scanf("%d", &v);
    const int chunks = T > 0 ? (T + CT - 1) / CT : 1;
    std::vector<int32_t> localPos(static_cast<size_t>(M) * K, -1), chunkCount(static_cast<size_t>(chunks) * E);
    std::vector<int32_t> regionBase(E), regionTotal(E), staged(R);
    // Route, one chunk ("block") at a time.
    for (int ch = 0; ch < chunks; ++ch) {
      std::vector<uint32_t> bits(static_cast<size_t>(E) * W, 0);
      std::vector<uint16_t> pre(static_cast<size_t>(E) * W, 0);
      auto owned = [&](int t) { return t < T && t % dp == src % dp; };
      for (int tid = 0; tid < CT; ++tid) {
        const int t = ch * CT + tid;
        if (!owned(t)) continue;
        for (int k = 0; k < K; ++k) {
          const int ex = idx[static_cast<size_t>(t) * K + k];
          if (ex >= 0 && ex < E) bits[ex * W + tid / 32] |= 1u << (tid % 32);
        }
      }
      for (int ex = 0; ex < E; ++ex) {
        int run = 0;
        for (int w = 0; w < W; ++w) {
          pre[ex * W + w] = static_cast<uint16_t>(run);
          run += sy::popcount32(bits[ex * W + w]);
        }
        chunkCount[static_cast<size_t>(ch) * E + ex] = run;
      }
      for (int tid = 0; tid < CT; ++tid) {
        const int t = ch * CT + tid;
        if (t >= T) continue;
        for (int k = 0; k < K; ++k) {
          const int ex = idx[static_cast<size_t>(t) * K + k];
          localPos[static_cast<size_t>(t) * K + k] =
              (owned(t) && ex >= 0 && ex < E) ? sy::rankInChunk(bits.data(), pre.data(), ex, W, tid / 32, tid % 32) : -1;
        }
      }
    }
    for (int ex = 0; ex < E; ++ex) {  // the last block's scan
      int run = 0;
      for (int ch = 0; ch < chunks; ++ch) {
        const int v = chunkCount[static_cast<size_t>(ch) * E + ex];
        chunkCount[static_cast<size_t>(ch) * E + ex] = run;
        run += v;
      }
      regionTotal[ex] = run;
    }
    for (int dst = 0; dst < R; ++dst) {
      int run = 0;
      for (int e = 0; e < L; ++e) {
        regionBase[dst * L + e] = run;
        run += regionTotal[dst * L + e];
      }
      staged[dst] = run;
    }
    SyContig g{};
    g.localPos = localPos.data();
    g.chunkCount = chunkCount.data();
    g.regionBase = regionBase.data();
    g.chunkTokens = CT;
    // Send: every (token, slot) into its destination's staging.
    for (int t = 0; t < T; ++t) {
      if (t % dp != src % dp) continue;
      for (int k = 0; k < K; ++k) {
        const int ex = idx[static_cast<size_t>(t) * K + k];
        if (ex < 0 || ex >= E) continue;
        const int dst = ex / L;
        const int row = sy::routeRow(g, E, t, k, K, ex);
        if (row < 0 || row >= C) {
          std::printf("error route row %d outside [0, %d) (src %d token %d slot %d)\n", row, C, src, t, k);
          return 0;
        }
        int* m = &staging[dst][(static_cast<size_t>(src) * C + row) * 4];
        if (m[0] != -2) {
          std::printf("error staging row %d of src %d on dst %d written twice\n", row, src, dst);
          return 0;
        }
        m[0] = src, m[1] = t, m[2] = k, m[3] = ex % L;
        if (Q > 0) rounds[dst].push_back({src, t, k, ex % L, row - regionBase[ex], t / Q});
      }
    }
    if (Q > 0) {  // no round holds more than Cq rows from this source for one destination
      for (int dst = 0; dst < R; ++dst) {
        std::vector<int> perRound((M + Q - 1) / Q, 0);
        for (const Staged& x : rounds[dst])
          if (x.src == src && ++perRound[x.round] > Cq) {
            std::printf("error round %d from src %d to dst %d holds more than Cq = %d rows\n", x.round, src, dst, Cq);
            return 0;
          }
      }
    }
    for (int ex = 0; ex < E; ++ex) countSignal[ex / L][src * L + ex % L] = regionTotal[ex];
    for (int dst = 0; dst < R; ++dst) doneSignal[dst][src] = staged[dst];
  }
  for (int dst = 0; dst < R; ++dst) {
    std::vector<int32_t> counts(E), rows(L), offsets(L + 1), expertCount(L), pairStart(E), stageStart(E);
    for (int s = 0; s < R; ++s) {
      int sum = 0;
      for (int e = 0; e < L; ++e) sum += counts[e * R + s] = countSignal[dst][s * L + e];
      if (sum != doneSignal[dst][s]) {
        std::printf("error rank %d: source %d announced %d rows, counts add up to %d\n", dst, s, doneSignal[dst][s], sum);
        return 0;
      }
    }
    sy::buildRecvTables(counts.data(), L, R, C, align, rows.data(), offsets.data(), expertCount.data(),
                        pairStart.data(), stageStart.data());
    std::printf("rank %d\ncounts", dst);
    for (int v : counts) std::printf(" %d", v);
    std::printf("\noffsets");
    for (int v : offsets) std::printf(" %d", v);
    std::printf("\n");
    // Bounded staging: rounds in order, each row straight to its place.
    std::vector<int> placed(static_cast<size_t>(offsets[L]) * 4, -2);
    for (int round = 0; Q > 0 && round < (M + Q - 1) / Q; ++round) {
      for (const Staged& x : rounds[dst]) {
        if (x.round != round) continue;
        if (x.index < 0 || x.index >= counts[x.e * R + x.src]) {
          std::printf("error rank %d: index %d outside the %d rows of (expert %d, source %d)\n", dst, x.index,
                      counts[x.e * R + x.src], x.e, x.src);
          return 0;
        }
        int* m = &placed[static_cast<size_t>(pairStart[x.e * R + x.src] + x.index) * 4];
        if (m[0] != -2) {
          std::printf("error rank %d: row %d placed twice\n", dst, pairStart[x.e * R + x.src] + x.index);
          return 0;
        }
        m[0] = x.src, m[1] = x.t, m[2] = x.k, m[3] = x.e;
      }
    }
    for (int row = 0; row < offsets[L]; ++row) {
      const sy::RowSource r = sy::sourceOfRow(row, offsets.data(), expertCount.data(), pairStart.data(),
                                              stageStart.data(), L, R);
      if (r.source < 0) {
        std::printf("-1 -1 -1 %d\n", r.expert);
        continue;
      }
      if (Q > 0) {
        const int* m = &placed[static_cast<size_t>(row) * 4];
        if (m[0] == -2) {
          std::printf("error rank %d row %d: no round placed a row there\n", dst, row);
          return 0;
        }
        std::printf("%d %d %d %d\n", m[0], m[1], m[2], m[3]);
        continue;
      }
      const int* m = &staging[dst][static_cast<size_t>(r.from) * 4];
      if (m[0] == -2 || r.from / C != r.source) {
        std::printf("error rank %d row %d reads staging row %d (source %d), never written\n", dst, row, r.from, r.source);
        return 0;
      }
      std::printf("%d %d %d %d\n", m[0], m[1], m[2], m[3]);
    }
  }
  return 0;
}
