/* SPDX-License-Identifier: Apache-2.0 */
/* radix_emulate.h (test_gpu_sort.c's --emulate part): codegen/gpu_radix.c's kernels run on the host,
 * step by step as a block would run them (waves of 32 lanes matching digits as NVPTX's match-any does,
 * waves of 64 with AMDGPU's 8 ballots, as bit masks), so that a
 * logic error in the digit, rank, scan, look-back or scatter arithmetic shows without a GPU. */

#define EM_DIGITS 256
#define EM_AGG (1u << 30)
#define EM_PREFIX (2u << 30)

/* The order-preserving image, as key_image in gpu_radix.c. */
static uint64_t em_image(LoomDType t, uint64_t k, int bits, bool desc) {
  uint64_t all = bits == 64 ? ~0ull : (1ull << bits) - 1, sign = 1ull << (bits - 1), u = k;
  if (t == LOOM_INT8 || t == LOOM_INT16 || t == LOOM_INT32 || t == LOOM_INT64) u = k ^ sign;
  if (is_floating(t)) {
    uint64_t inf = t == LOOM_FLOAT16 ? 0x7c00u : t == LOOM_BFLOAT16 ? 0x7f80u : t == LOOM_FLOAT32 ? 0x7f800000u
                                                                                                 : 0x7ff0000000000000ull;
    u = (k & (sign - 1)) > inf ? all : (k & sign) ? ((~k + 1) & all) : (k | sign); /* negatives: -k */
  }
  return (desc ? ~u : u) & all;
}

typedef struct EmSort {
  LoomDType t;
  int bits, es, wave, nwarps;
  CgRadixShape sh;
  int64_t rows, n, tpr, tiles;
  bool desc;
  uint32_t *hist;   /* [rows][passes][256] */
  uint32_t *status; /* [tiles][256] of the current pass */
} EmSort;

/* The histogram kernel: blocks of `chunk` tiles of one row (as gpu_sort.c launches it, with a small
 * block count so that blocks span several tiles), counts gathered per block then added to the row's. */
static void em_histogram(EmSort *s, const void *keys, int64_t hist_blocks) {
  int64_t chunk = (s->tiles + hist_blocks - 1) / hist_blocks, bpr = (s->tpr + chunk - 1) / chunk;
  uint32_t *local = malloc(sizeof *local * (size_t)s->sh.passes * EM_DIGITS);
  for (int64_t b = 0; b < s->rows * bpr; b++) {
    memset(local, 0, sizeof *local * (size_t)s->sh.passes * EM_DIGITS);
    int64_t row = b / bpr, first = (b % bpr) * chunk, last = first + chunk < s->tpr ? first + chunk : s->tpr;
    for (int64_t t = first; t < last; t++)
      for (int64_t e = 0; e < s->sh.tile && t * s->sh.tile + e < s->n; e++) {
        uint64_t u = em_image(s->t, bits_at(keys, s->es, row * s->n + t * s->sh.tile + e), s->bits, s->desc);
        for (int p = 0; p < s->sh.passes; p++) local[p * EM_DIGITS + ((u >> (8 * p)) & 255)]++;
      }
    for (int i = 0; i < s->sh.passes * EM_DIGITS; i++) s->hist[row * s->sh.passes * EM_DIGITS + i] += local[i];
  }
  free(local);
}

/* One tile's ranking (everything before the look-back): the digits, ranks and tile counts. */
typedef struct EmTile {
  int64_t row, start, valid;
  int dig[CG_RADIX_BLOCK][CG_RADIX_MAX_ITEMS];
  bool ok[CG_RADIX_BLOCK][CG_RADIX_MAX_ITEMS];
  uint32_t rank[CG_RADIX_BLOCK][CG_RADIX_MAX_ITEMS];
  uint32_t wc[16][EM_DIGITS]; /* per wave, then its exclusive prefix over waves */
  uint32_t count[EM_DIGITS], tstart[EM_DIGITS];
} EmTile;

/* The trivial-pass plan (gpu_radix_plan.c) worked out here on its own: per row, the passes where one
 * digit holds all n keys are skipped; the rest, counted from the last backwards, alternate between the
 * output (the last) and the temporary. Words as CG_RADIX_PLAN_*. */
static void em_plan(const EmSort *s, uint32_t *plan) {
  int P = s->sh.passes;
  for (int64_t r = 0; r < s->rows; r++) {
    bool trivial[8];
    int m = 0;
    for (int p = 0; p < P; p++) {
      trivial[p] = false;
      for (int d = 0; d < EM_DIGITS; d++) trivial[p] |= s->hist[(r * P + p) * EM_DIGITS + d] == (uint32_t)s->n;
      m += !trivial[p];
    }
    for (int p = 0, k = 0; p < P; p++) {
      int after = m - 1 - k; /* non-trivial passes after p */
      plan[r * P + p] = trivial[p] ? CG_RADIX_PLAN_TRIVIAL | (m == 0 ? CG_RADIX_PLAN_NONE : 0)
                                   : (k == 0 ? CG_RADIX_PLAN_FIRST : 0) | (after == 0 ? CG_RADIX_PLAN_LAST : 0) |
                                         (after % 2 ? CG_RADIX_PLAN_ODD : 0);
      k += !trivial[p];
    }
  }
}

/* The buffer (0 input, 1 output, 2 temporary) a planned pass of word w reads, and the one it writes. */
static int em_source(uint32_t w) { return (w & CG_RADIX_PLAN_FIRST) ? 0 : (w & CG_RADIX_PLAN_ODD) ? 1 : 2; }
static int em_dest(uint32_t w) { return (w & CG_RADIX_PLAN_ODD) ? 2 : 1; }

static void em_rank_tile(EmSort *s, const void *in, int64_t tile, int pass, EmTile *x) {
  int W = s->wave, I = s->sh.items, T = s->sh.tile;
  memset(x, 0, sizeof *x);
  x->row = tile / s->tpr;
  x->start = (tile % s->tpr) * T;
  x->valid = s->n - x->start < T ? s->n - x->start : T;
  for (int w = 0; w < s->nwarps; w++)
    for (int j = 0; j < I; j++) {
      uint64_t ballot_ok = 0, ballot_bit[8] = {0};
      int dig[64];
      for (int l = 0; l < W; l++) {
        int64_t e = (int64_t)w * I * W + (int64_t)j * W + l;
        bool ok = e < x->valid;
        uint64_t k = bits_at(in, s->es, x->row * s->n + x->start + (ok ? e : 0));
        dig[l] = ok ? (int)((em_image(s->t, k, s->bits, s->desc) >> (8 * pass)) & 255) : 0;
        if (ok) ballot_ok |= 1ull << l;
        for (int b = 0; b < 8; b++)
          if ((dig[l] >> b) & 1) ballot_bit[b] |= 1ull << l;
      }
      uint32_t before[64];
      for (int l = 0; l < W; l++) before[l] = x->wc[w][dig[l]]; /* every lane reads, then leaders write */
      for (int l = 0; l < W; l++) {
        bool ok = (ballot_ok >> l) & 1;
        uint64_t peers = ballot_ok;
        if (W == 32) { /* NVPTX: match-any of the digit, 256 on an invalid lane */
          peers = 0;
          for (int o = 0; o < W; o++)
            if ((((ballot_ok >> o) & 1) ? dig[o] : 256) == (ok ? dig[l] : 256)) peers |= 1ull << o;
        } else { /* AMDGPU: 8 ballots */
          for (int b = 0; b < 8; b++) peers &= ((dig[l] >> b) & 1) ? ballot_bit[b] : ~ballot_bit[b];
        }
        int t = w * W + l;
        x->dig[t][j] = dig[l];
        x->ok[t][j] = ok;
        x->rank[t][j] = before[l] + (uint32_t)__builtin_popcountll(peers & ((1ull << l) - 1));
        if (ok && (peers >> l) == 1) x->wc[w][dig[l]] = before[l] + (uint32_t)__builtin_popcountll(peers);
      }
    }
  for (int d = 0; d < EM_DIGITS; d++) {
    uint32_t run = 0;
    for (int w = 0; w < s->nwarps; w++) {
      uint32_t c = x->wc[w][d];
      x->wc[w][d] = run;
      run += c;
    }
    x->count[d] = run;
  }
  for (int d = 0, acc = 0; d < EM_DIGITS; d++) {
    x->tstart[d] = (uint32_t)acc;
    acc += (int)x->count[d];
  }
}

/* One pass over every tile: rank all tiles and publish their own counts (row-first tiles publish
 * inclusive ones), then resolve the tiles in a shuffled order by the look-back, stage and scatter. */
static bool em_pass(EmSort *s, void *const *kbuf, int64_t *const *vbuf, const uint32_t *plan, int pass) {
  EmTile *xs = calloc((size_t)s->tiles, sizeof *xs);
  /* planned: the tile's row's word picks its buffers (kbuf / vbuf [0] input, [1] output, [2] temporary;
   * vbuf[0] NULL: argsort's index made by the row's first pass); trivial rows are skipped */
#define EM_WORD(g) (plan ? plan[((g) / s->tpr) * s->sh.passes + pass] : (CG_RADIX_PLAN_FIRST | CG_RADIX_PLAN_LAST))
  int64_t *order = malloc(sizeof *order * (size_t)s->tiles);
  memset(s->status, 0, sizeof *s->status * (size_t)s->tiles * EM_DIGITS);
  for (int64_t g = 0; g < s->tiles; g++) {
    order[g] = g;
    if (EM_WORD(g) & CG_RADIX_PLAN_TRIVIAL) continue; /* the block returns at once */
    em_rank_tile(s, kbuf[em_source(EM_WORD(g))], g, pass, &xs[g]);
    for (int d = 0; d < EM_DIGITS; d++)
      s->status[g * EM_DIGITS + d] = (xs[g].start == 0 ? EM_PREFIX : EM_AGG) | xs[g].count[d];
  }
  for (int64_t g = s->tiles - 1; g > 0; g--) { /* shuffle */
    int64_t k = (int64_t)(tc_rand_u64(&rng) % (uint64_t)(g + 1)), t = order[g];
    order[g] = order[k];
    order[k] = t;
  }
  bool ok = true;
  int T = s->sh.tile, W = s->wave, B = s->sh.block;
  uint64_t *stage = malloc(sizeof *stage * (size_t)T);
  int64_t *vstage = malloc(sizeof *vstage * (size_t)T);
  char *used = malloc((size_t)T);
  for (int64_t o = 0; o < s->tiles && ok; o++) {
    int64_t g = order[o];
    EmTile *x = &xs[g];
    uint32_t word = EM_WORD(g);
    if (word & CG_RADIX_PLAN_TRIVIAL) continue;
    const void *in = kbuf[em_source(word)];
    void *out = kbuf[em_dest(word)];
    const int64_t *vin = vbuf[em_source(word)];
    int64_t *vout = vbuf[em_dest(word)];
    int64_t base[EM_DIGITS];
    uint32_t rstart = 0;
    for (int d = 0; d < EM_DIGITS; d++) {
      uint32_t prior = 0;
      if (x->start != 0) {
        for (int64_t k = g - 1;; k--) {
          uint32_t w = s->status[k * EM_DIGITS + d];
          prior += w & 0x3fffffffu;
          if ((w >> 30) == 2) break;
          if (!CHECK((w >> 30) == 1, "emulated look-back met status flag %u", w >> 30)) return false;
        }
      }
      s->status[g * EM_DIGITS + d] = EM_PREFIX | (prior + x->count[d]);
      base[d] = x->row * s->n + rstart + prior - x->tstart[d];
      rstart += s->hist[(x->row * s->sh.passes + pass) * EM_DIGITS + d];
    }
    memset(used, 0, (size_t)T);
    for (int t = 0; t < B; t++)
      for (int j = 0; j < s->sh.items; j++) {
        if (!x->ok[t][j]) continue;
        int w = t / W, l = t % W, d = x->dig[t][j];
        int64_t e = (int64_t)w * s->sh.items * W + (int64_t)j * W + l;
        uint32_t pos = x->tstart[d] + x->wc[w][d] + x->rank[t][j];
        if (pos >= x->valid || used[pos]) {
          ok = CHECK(false, "tile %lld: slot %u taken twice or past the tile", (long long)g, pos);
          break;
        }
        used[pos] = 1;
        stage[pos] = bits_at(in, s->es, x->row * s->n + x->start + e);
        vstage[pos] = vin ? vin[x->row * s->n + x->start + e] : x->start + e;
      }
    for (int64_t i = 0; i < x->valid && ok; i++) {
      int d = (int)((em_image(s->t, stage[i], s->bits, s->desc) >> (8 * pass)) & 255);
      int64_t dest = base[d] + i;
      memcpy((char *)out + dest * s->es, &stage[i], (size_t)s->es);
      vout[dest] = vstage[i];
    }
  }
  free(stage);
  free(vstage);
  free(used);
  free(order);
  free(xs);
  return ok;
#undef EM_WORD
}

/* The emulated sort of rows x n keys; checks keys and indices against the reference. row_items > 0: the
 * block row sort of that many keys a thread (gpu_radix_rows.c): the whole row is one tile of 256 row_items
 * slots ranked per pass in the block's memory -- the sweep's arithmetic with one tile a row, no look-back
 * (every tile is its row's first), and each pass's staged row the next pass's input. */
static void emulate_shape_one(LoomDType t, int wave, int64_t rows, int64_t n, int kind, bool desc, int row_items,
                              int tuned_items, bool planned) {
  EmSort s = {.t = t, .bits = esize(t) * 8, .es = esize(t), .wave = wave, .rows = rows, .n = n, .desc = desc};
  CgRadixSpec spec = {.key = t, .value_bytes = tuned_items ? 0 : 8, .wave = wave, .items = tuned_items};
  s.sh = cg_radix_shape(&spec); /* tuned_items: CgRadixSpec.items of a keys-only sort, cut as the kernel cuts it */
  if (row_items > 0) {
    s.sh.items = row_items;
    s.sh.tile = CG_RADIX_BLOCK * row_items;
    if (!CHECK(n <= s.sh.tile, "emulated row sort: %lld keys do not fit %d slots", (long long)n, s.sh.tile)) return;
  }
  s.nwarps = s.sh.block / wave;
  s.tpr = (n + s.sh.tile - 1) / s.sh.tile;
  s.tiles = rows * s.tpr;
  int64_t total = rows * n;
  void *keys = malloc((size_t)(total ? total : 1) * (size_t)s.es), *a = malloc((size_t)(total ? total : 1) * (size_t)s.es);
  void *b = malloc((size_t)(total ? total : 1) * (size_t)s.es);
  int64_t *va = malloc(sizeof *va * (size_t)(total ? total : 1)), *vb = malloc(sizeof *vb * (size_t)(total ? total : 1));
  int64_t *perm = malloc(sizeof *perm * (size_t)(total ? total : 1));
  s.hist = calloc((size_t)rows * (size_t)s.sh.passes * EM_DIGITS, sizeof *s.hist);
  s.status = malloc(sizeof *s.status * (size_t)(s.tiles ? s.tiles : 1) * EM_DIGITS);
  fill_rows(t, keys, rows, n, kind);
  em_histogram(&s, keys, 1 + (int64_t)(tc_rand_u64(&rng) % 4));
  bool ok = true;
  const void *kin = keys;
  const int64_t *vin = NULL;
  uint32_t *plan = planned ? malloc(sizeof *plan * (size_t)(rows ? rows : 1) * (size_t)s.sh.passes) : NULL;
  if (planned) { /* every pass reads and writes through the plan; rows with none copied at the end */
    em_plan(&s, plan);
    void *kbuf[3] = {keys, a, b};
    int64_t *vbuf[3] = {NULL, va, vb};
    for (int p = 0; p < s.sh.passes && ok; p++) ok = em_pass(&s, kbuf, vbuf, plan, p);
    for (int64_t r = 0; r < rows; r++)
      if (plan[r * s.sh.passes] & CG_RADIX_PLAN_NONE) /* loom_radix_copy */
        for (int64_t e = 0; e < n; e++) {
          memcpy((char *)a + (r * n + e) * s.es, (char *)keys + (r * n + e) * s.es, (size_t)s.es);
          va[r * n + e] = e;
        }
    kin = a;
    vin = va;
  }
  for (int p = 0; p < s.sh.passes && ok && !planned; p++) {
    void *kout = (p & 1) ? b : a;
    int64_t *vout = (p & 1) ? vb : va;
    void *kbuf[3] = {(void *)kin, kout, kout};
    int64_t *vbuf[3] = {(int64_t *)vin, vout, vout};
    ok = em_pass(&s, kbuf, vbuf, NULL, p);
    kin = kout;
    vin = vout;
  }
  free(plan);
  ref_sort(t, keys, rows, n, desc, perm);
  char what[128];
  snprintf(what, sizeof what, "emulated wave %d %s %lldx%lld kind %d%s row items %d%s", wave, loom_dtype_name(t),
           (long long)rows, (long long)n, kind, desc ? " descending" : "", row_items, planned ? " planned" : "");
  int64_t bad = -1;
  for (int64_t i = 0; i < total && ok && bad < 0; i++)
    if (vin[i] != perm[i] || bits_at(kin, s.es, i) != bits_at(keys, s.es, (i / n) * n + perm[i])) bad = i;
  if (ok) CHECK(bad < 0, "%s: position %lld holds index %lld, want %lld", what, (long long)bad,
                (long long)(bad >= 0 ? vin[bad] : 0), (long long)(bad >= 0 ? perm[bad] : 0));
  free(keys), free(a), free(b), free(va), free(vb), free(perm), free(s.hist), free(s.status);
}

static void emulate_rows_one(LoomDType t, int wave, int64_t rows, int64_t n, int kind, bool desc, int row_items) {
  emulate_shape_one(t, wave, rows, n, kind, desc, row_items, 0, false);
}

static void emulate_one(LoomDType t, int wave, int64_t rows, int64_t n, int kind, bool desc) {
  emulate_shape_one(t, wave, rows, n, kind, desc, 0, 0, false);
}

/* The planned sweep (trivial passes skipped, gpu_radix_plan.c): small ranges, all keys equal, a trivial
 * first pass, a common exponent byte, and rows of different ranges (rows that disagree, one with no
 * non-trivial pass). */
static void emulate_planned(LoomDType t, int wave, int64_t rows, int64_t n, int kind, bool desc) {
  emulate_shape_one(t, wave, rows, n, kind, desc, 0, 0, true);
}

static void emulate_cases(void) {
  /* the block row sorts: every variant the module has for argsort's int32 index (as gpu_sort.c picks the
   * smallest that holds the row), rows of 1, of exactly the variant's capacity, one short of it, and
   * shorter than the next smaller variant's */
  for (int i = 0; i < NKEY_TYPES; i++)
    for (int w = 32; w <= 64; w *= 2) {
      LoomDType t = key_types[i];
      CgRadixSpec spec = {.key = t, .value_bytes = 4, .wave = w};
      int items[CG_RADIX_ROW_VARIANTS], nv = cg_radix_row_items(&spec, items);
      for (int v = 0; v < nv; v++) {
        int cap = CG_RADIX_BLOCK * items[v];
        if (v % 2 == (w == 64)) emulate_rows_one(t, w, 3, cap, 2, v % 3 == 0, items[v]);
        else emulate_rows_one(t, w, 2, cap - 1, 0, v % 3 == 1, items[v]);
      }
      emulate_rows_one(t, w, 5, 1, 0, false, 1);
      emulate_rows_one(t, w, 7, 100, 1, true, 1);
      emulate_rows_one(t, w, 4, 1000, 3, false, 4);
    }
  for (int i = 0; i < NKEY_TYPES; i++)
    for (int w = 32; w <= 64; w *= 2) {
      LoomDType t = key_types[i];
      emulate_one(t, w, 1, 10000, 0, false);
      emulate_one(t, w, 3, 4097, 2, false);
      emulate_one(t, w, 2, 5000, 1, true);
      emulate_one(t, w, 1, 1, 0, false);
      emulate_one(t, w, 5, 77, 2, true);
    }
  /* tuned tile shapes (bench/sort_sweep.py's keys per thread; tiles of 1536 .. 4608 keys, not powers of 2) */
  static const int tuned[] = {6, 9, 12, 20, 24, 32};
  for (int i = 0; i < 6; i++) {
    emulate_shape_one(LOOM_FLOAT32, 32, 2, 20011, i % 5, i & 1, 0, tuned[i], false);
    emulate_shape_one(LOOM_INT64, 64, 1, 15013, (i + 2) % 5, !(i & 1), 0, tuned[i], i & 1);
  }
  emulate_one(LOOM_FLOAT32, 32, 1, 40000, 2, false); /* ten tiles: long look-back walks */
  emulate_one(LOOM_INT64, 64, 1, 30001, 3, false);
  emulate_one(LOOM_UINT16, 32, 1, 30001, 4, true);
  for (int i = 0; i < NKEY_TYPES; i++)
    for (int kind = 0; kind <= KIND_MIXED_ROWS; kind++) {
      int w = (i + kind) % 2 ? 64 : 32;
      emulate_planned(key_types[i], w, 1, 10000, kind, kind % 3 == 1);
      emulate_planned(key_types[i], w, kind == KIND_MIXED_ROWS ? 7 : 2, 4097, kind, kind % 3 == 2);
    }
  emulate_planned(LOOM_INT32, 32, 1, 1, KIND_EQUAL, false);
  emulate_planned(LOOM_FLOAT64, 64, 1, 40000, KIND_EXPONENT, false); /* ten tiles: look-back over planned tiles */
}
