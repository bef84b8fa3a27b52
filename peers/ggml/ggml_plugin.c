/* ropecheck plugin (include/ropecheck/kernel.h) that runs ggml's CPU RoPE: llama.cpp's rope, built
 * from the pinned source by peers/ggml/build_ggml.sh (peers/ggml/README.md pins the version).
 *
 * Nothing of ggml is needed at build time: the libraries are dlopen'ed at run time from the folder
 * named by the environment variable ROPECHECK_GGML_DIR (a folder of build_ggml.sh, which holds
 * libggml-base.so and one variant library, as llama.cpp's releases lay them out), and the
 * few functions called are declared in ggml_api.h from ggml's public headers (ggml.h, ggml-cpu.h,
 * ggml-backend.h of the ggml-org/ggml repository; signatures and enum values only), which
 * bench/peers_bench.cpp shares.
 *
 * Implementations: one per CPU variant library libggml-cpu-<isa>.so ("ggml-x64", "ggml-sse42",
 * "ggml-haswell", ...) and "ggml-best" (= "auto"): of the variants in the folder, the one with the
 * highest ggml_backend_score() on this machine, the one llama.cpp itself would pick. x64 and sse42 are
 * built without FMA, haswell and later with it, so both rounding behaviours can be gated.
 * A variant that cannot be loaded (no ROPECHECK_GGML_DIR, no file, a score of 0 on this CPU) is
 * reported by ropecheck_kernel_available as 0 and its apply returns ROPECHECK_ERROR_UNAVAILABLE;
 * the reason is printed once on stderr.
 *
 * Mapping of a ropecheck spec onto ggml_rope_ext / ggml_rope_multi (and their _back forms for
 * direction=inverse, which rotate by -angle): peers/ggml/README.md. What ggml cannot express is
 * ROPECHECK_ERROR_UNSUPPORTED, never approximated. */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ropecheck/kernel.h>

#include "ggml_api.h"

#if defined(__GNUC__)
#define PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define PLUGIN_EXPORT
#endif

/* ---- the variants ------------------------------------------------------------------------------- */
/* Implementation names; index 0 is "ggml-best", index i > 0 is libggml-cpu-<isa>.so, the variant
 * g_variants[i - 1] (ggml_api.h lists them). */
#define GGML_PLUGIN_NAME(isa) "ggml-" #isa,
static const char* const kNames[] = {"ggml-best", GGML_CPU_VARIANTS(GGML_PLUGIN_NAME)};
#undef GGML_PLUGIN_NAME
enum { kCount = (int)(sizeof(kNames) / sizeof(kNames[0])) };

static ggml_variant g_variants[kCount - 1];
static int g_best = -1; /* index of the best variant, once resolved; 0 = none */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static int index_of(const char* implementation) {
  int i;
  if (implementation == NULL || strcmp(implementation, "auto") == 0) return 0;
  for (i = 0; i < kCount; ++i) {
    if (strcmp(implementation, kNames[i]) == 0) return i;
  }
  return -1;
}

/* Loads variant i (> 0) once, printing the reason it is unavailable (the unset folder only once
 * for all variants); caller holds g_lock. With skip_absent (the search for the best), a variant
 * whose library is not in the folder is passed over in silence and not marked as tried: a folder
 * may hold a single variant (peers/ggml/build_ggml.sh builds one per folder). */
static void load_variant(int i, int skip_absent) {
  static int said_unset = 0;
  const char* dir = getenv("ROPECHECK_GGML_DIR");
  const char *what, *detail;
  if (skip_absent && dir != NULL && dir[0] != '\0' && !g_variants[i - 1].tried) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s/libggml-cpu-%s.so", dir, kNames[i] + strlen("ggml-")) < (int)sizeof path &&
        access(path, F_OK) != 0) {
      return;
    }
  }
  if (ggml_variant_load(&g_variants[i - 1], dir, kNames[i] + strlen("ggml-"), &what, &detail) || what == NULL) return;
  if (dir == NULL || dir[0] == '\0') {
    if (said_unset) return;
    said_unset = 1;
  }
  fprintf(stderr, "ropecheck ggml plugin: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
}

/* The variant that `implementation` runs as: > 0, 0 when unavailable, -1 when unknown. */
static int pick(const char* implementation) {
  int i = index_of(implementation), j, result;
  if (i < 0) return -1;
  pthread_mutex_lock(&g_lock);
  if (i == 0) {
    if (g_best < 0) {
      const char* dir = getenv("ROPECHECK_GGML_DIR");
      for (j = 1; j < kCount; ++j) load_variant(j, 1);
      g_best = ggml_best_variant(g_variants, kCount - 1) + 1; /* -1 (none) becomes 0 */
      if (g_best == 0 && dir != NULL && dir[0] != '\0') {
        fprintf(stderr,
                "ropecheck ggml plugin: no CPU variant library libggml-cpu-<isa>.so in %s loads and runs on this CPU\n",
                dir);
      }
    }
    result = g_best;
  } else {
    load_variant(i, 0);
    result = g_variants[i - 1].score > 0 ? i : 0;
  }
  pthread_mutex_unlock(&g_lock);
  return result;
}

PLUGIN_EXPORT uint32_t ropecheck_kernel_abi_version(void) { return ROPECHECK_KERNEL_ABI_VERSION; }
PLUGIN_EXPORT int32_t ropecheck_kernel_count(void) { return kCount; }
PLUGIN_EXPORT const char* ropecheck_kernel_name(int32_t index) {
  return index >= 0 && index < kCount ? kNames[index] : NULL;
}

PLUGIN_EXPORT int32_t ropecheck_kernel_available(const char* implementation) {
  const int i = pick(implementation);
  return i < 0 ? ROPECHECK_ERROR_UNKNOWN_IMPLEMENTATION : i > 0;
}

PLUGIN_EXPORT const char* ropecheck_kernel_resolve(const char* implementation) {
  const int i = pick(implementation);
  return i > 0 ? kNames[i] : NULL;
}

/* ---- spec -> ggml parameters -------------------------------------------------------------------- */
typedef struct rope_params {
  int n_dims, mode, n_ctx_orig;
  float freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
  int multi;                           /* ggml_rope_multi (M-RoPE) */
  int sections[GGML_MROPE_SECTIONS];
  float* freq_factors;                 /* NULL, or rotary_dim/2 divisors of θ_j (llama3, longrope) */
} rope_params;

/* llama3 (docs/rope.md §2) as llama.cpp runs it: θ'_j = θ_j / c_j with the divisor
 * c_j = 1 (λ_j < L0/high_ff), f (λ_j > L0/low_ff), else 1/((1 − s)/f + s), s = (L0/λ_j − low_ff)/(high_ff − low_ff),
 * computed in double and held as float32 (ggml's freq-factor tensor is F32). */
static float llama3_divisor(const ropecheck_spec* spec, int j) {
  const double pi = acos(-1.0);
  const double theta = pow(spec->base, -2.0 * j / spec->rotary_dim);
  const double wavelength = 2 * pi / theta, l0 = (double)spec->original_max_position, f = spec->factor;
  double s;
  if (wavelength < l0 / spec->high_freq_factor) return 1.0f;
  if (wavelength > l0 / spec->low_freq_factor) return (float)f;
  s = (l0 / wavelength - spec->low_freq_factor) / (spec->high_freq_factor - spec->low_freq_factor);
  return (float)(1.0 / ((1 - s) / f + s));
}

/* LongRoPE's attention factor (docs/rope.md §2): the explicit one, else √(1 + ln f / ln L0) for f > 1. */
static double longrope_attention(const ropecheck_spec* spec) {
  if (!isnan(spec->attention_factor)) return spec->attention_factor;
  if (isnan(spec->factor) || !(spec->factor > 1)) return 1.0;
  return sqrt(1 + log(spec->factor) / log((double)spec->original_max_position));
}

/* ROPECHECK_OK, or why the spec cannot be given to ggml. Allocates p->freq_factors when needed. */
static int32_t map_spec(const ropecheck_spec* spec, rope_params* p) {
  const int pairs = spec->rotary_dim / 2;
  int j;
  memset(p, 0, sizeof *p);
  if (spec->head_dim < 2 || spec->rotary_dim < 2 || spec->rotary_dim > spec->head_dim || spec->rotary_dim % 2 != 0 ||
      !(spec->base > 1.0)) {
    return ROPECHECK_ERROR_INVALID_SPEC;
  }
  if (spec->dtype != ROPECHECK_DTYPE_F32 && spec->dtype != ROPECHECK_DTYPE_F16) return ROPECHECK_ERROR_UNSUPPORTED;
  /* freq_base is a float: a base that float32 does not hold exactly is another rotation. */
  if ((double)(float)spec->base != spec->base) return ROPECHECK_ERROR_UNSUPPORTED;
  p->n_dims = spec->rotary_dim;
  p->mode = spec->layout == ROPECHECK_LAYOUT_INTERLEAVED ? GGML_ROPE_TYPE_NORMAL : GGML_ROPE_TYPE_NEOX;
  p->freq_base = (float)spec->base;
  p->freq_scale = 1.0f;
  p->ext_factor = 0.0f;
  p->attn_factor = 1.0f;
  p->beta_fast = 32.0f; /* llama.cpp's defaults; unused while ext_factor = 0 */
  p->beta_slow = 1.0f;
  switch (spec->axes) {
    case ROPECHECK_AXES_NONE: break;
    case ROPECHECK_AXES_MROPE:
      /* ggml's M-RoPE pairs dims as NEOX does (j, j + n_dims/2), with at most 4 sections. */
      if (spec->layout != ROPECHECK_LAYOUT_HALF || spec->section_count > GGML_MROPE_SECTIONS) {
        return ROPECHECK_ERROR_UNSUPPORTED;
      }
      p->multi = 1;
      p->mode = GGML_ROPE_TYPE_MROPE;
      for (j = 0; j < spec->section_count; ++j) p->sections[j] = spec->sections[j];
      break;
    default: return ROPECHECK_ERROR_UNSUPPORTED; /* 2-D RoPE: ggml's VISION mode is another schedule */
  }
  switch (spec->scaling) {
    case ROPECHECK_SCALING_NONE: break;
    case ROPECHECK_SCALING_LINEAR: p->freq_scale = (float)(1.0 / spec->factor); break; /* llama.cpp: 1/factor */
    case ROPECHECK_SCALING_YARN_GGML:
      p->freq_scale = (float)spec->freq_scale;
      p->ext_factor = (float)spec->ext_factor;
      p->attn_factor = (float)spec->attn_factor;
      p->beta_fast = (float)spec->beta_fast;
      p->beta_slow = (float)spec->beta_slow;
      if (spec->original_max_position > 0x7fffffff) return ROPECHECK_ERROR_UNSUPPORTED;
      p->n_ctx_orig = (int)spec->original_max_position;
      break;
    case ROPECHECK_SCALING_LLAMA3:
    case ROPECHECK_SCALING_LONGROPE: {
      /* llama.cpp runs both through a freq-factor tensor (θ_j / c_j), as its GGUF converter writes them. */
      const double* ext = NULL;
      if (spec->scaling == ROPECHECK_SCALING_LONGROPE) {
        if (spec->longrope_factor_count != pairs) return ROPECHECK_ERROR_UNSUPPORTED;
        ext = spec->seq_len > spec->original_max_position ? spec->long_factor : spec->short_factor;
        if (ext == NULL) return ROPECHECK_ERROR_INVALID_SPEC;
        p->attn_factor = (float)longrope_attention(spec);
      }
      p->freq_factors = (float*)malloc(sizeof(float) * (size_t)pairs);
      if (p->freq_factors == NULL) return ROPECHECK_ERROR_INTERNAL;
      for (j = 0; j < pairs; ++j) p->freq_factors[j] = ext ? (float)ext[j] : llama3_divisor(spec, j);
      break;
    }
    default:
      /* ntk (b' = b·f^(d/(d−2)) is no float), dynamic (no such mode), HF yarn (llama.cpp runs yarn
       * models with its own yarn: gate them as yarn-ggml). */
      return ROPECHECK_ERROR_UNSUPPORTED;
  }
  return ROPECHECK_OK;
}

/* ---- one call ----------------------------------------------------------------------------------- */
static void copy_in(const ropecheck_call* call, const ropecheck_tensor* t, void* dst, size_t element, int64_t head_dim) {
  int64_t token, head;
  for (token = 0; token < call->tokens; ++token) {
    for (head = 0; head < t->heads; ++head) {
      const int64_t from = token * t->input_token_stride + head * t->input_head_stride;
      const int64_t to = (token * t->heads + head) * head_dim;
      memcpy((char*)dst + (size_t)to * element, (const char*)t->input + (size_t)from * element, (size_t)head_dim * element);
    }
  }
}

static void copy_out(const ropecheck_call* call, const ropecheck_tensor* t, const void* src, size_t element, int64_t head_dim) {
  int64_t token, head;
  for (token = 0; token < call->tokens; ++token) {
    for (head = 0; head < t->heads; ++head) {
      const int64_t from = (token * t->heads + head) * head_dim;
      const int64_t to = token * t->output_token_stride + head * t->output_head_stride;
      memcpy((char*)t->output + (size_t)to * element, (const char*)src + (size_t)from * element, (size_t)head_dim * element);
    }
  }
}

/* Builds the rope node of one tensor (a: [head_dim, heads, tokens] in ggml's ne order). */
static struct ggml_tensor* rope_node(const ggml_api* api, struct ggml_context* ctx, rope_params* p, int inverse,
                                     struct ggml_tensor* a, struct ggml_tensor* pos, struct ggml_tensor* ff) {
  if (p->multi) {
    ggml_rope_multi_fn f = inverse ? api->rope_multi_back : api->rope_multi;
    return f(ctx, a, pos, ff, p->n_dims, p->sections, p->mode, p->n_ctx_orig, p->freq_base, p->freq_scale,
             p->ext_factor, p->attn_factor, p->beta_fast, p->beta_slow);
  }
  {
    ggml_rope_ext_fn f = inverse ? api->rope_ext_back : api->rope_ext;
    return f(ctx, a, pos, ff, p->n_dims, p->mode, p->n_ctx_orig, p->freq_base, p->freq_scale, p->ext_factor,
             p->attn_factor, p->beta_fast, p->beta_slow);
  }
}

static int32_t run(const ggml_api* api, const ropecheck_call* call, rope_params* p) {
  const ropecheck_spec* spec = call->spec;
  const int type = spec->dtype == ROPECHECK_DTYPE_F32 ? GGML_TYPE_F32 : GGML_TYPE_F16;
  const size_t element = ropecheck_dtype_size(spec->dtype);
  const int64_t head_dim = spec->head_dim, tokens = call->tokens;
  const int64_t pos_count = p->multi ? GGML_MROPE_SECTIONS * tokens : tokens;
  const int threads = call->threads > 0 ? call->threads : 1;
  const ropecheck_tensor* tensors[2] = {&call->q, &call->k};
  struct ggml_tensor* outputs[2] = {NULL, NULL};
  struct ggml_init_params init;
  struct ggml_context* ctx;
  struct ggml_tensor *pos, *ff = NULL;
  struct ggml_cgraph* graph;
  int32_t* pos_data;
  size_t data_bytes = 0;
  int64_t t, k;
  int i, status;

  for (i = 0; i < 2; ++i) data_bytes += 2 * (size_t)(tensors[i]->heads * tokens * head_dim) * element;
  /* tensors, graph, positions, freq factors, and ggml_graph_compute_with_ctx's work buffer (a
   * cos/sin cache of head_dim floats per thread), with room to spare: running out aborts. */
  init.mem_size = data_bytes + 16 * api->tensor_overhead() + api->graph_overhead() + (size_t)pos_count * 4 +
                  (size_t)head_dim * 4 + (size_t)threads * ((size_t)head_dim + 64) * 8 + (1u << 20);
  init.mem_buffer = NULL;
  init.no_alloc = false;
  ctx = api->init(init);
  if (ctx == NULL) return ROPECHECK_ERROR_INTERNAL;

  pos = api->new_tensor_1d(ctx, GGML_TYPE_I32, pos_count);
  pos_data = (int32_t*)api->get_data(pos);
  memset(pos_data, 0, (size_t)pos_count * 4); /* M-RoPE components beyond the spec's: 0 */
  for (t = 0; t < tokens; ++t) {
    for (k = 0; k < spec->position_components; ++k) {
      /* ggml: one position per token, or component-major [4·tokens] for M-RoPE */
      pos_data[p->multi ? k * tokens + t : t] = (int32_t)call->positions[t * spec->position_components + k];
    }
  }
  if (p->freq_factors != NULL) {
    ff = api->new_tensor_1d(ctx, GGML_TYPE_F32, spec->rotary_dim / 2);
    memcpy(api->get_data(ff), p->freq_factors, sizeof(float) * (size_t)(spec->rotary_dim / 2));
  }
  graph = api->new_graph(ctx);
  for (i = 0; i < 2; ++i) {
    struct ggml_tensor* a;
    if (tensors[i]->heads <= 0) continue;
    a = api->new_tensor_3d(ctx, type, head_dim, tensors[i]->heads, tokens);
    copy_in(call, tensors[i], api->get_data(a), element, head_dim);
    outputs[i] = rope_node(api, ctx, p, spec->direction == ROPECHECK_DIRECTION_INVERSE, a, pos, ff);
    api->build_forward_expand(graph, outputs[i]);
  }
  status = api->graph_compute_with_ctx(ctx, graph, threads);
  if (status == GGML_STATUS_SUCCESS) {
    for (i = 0; i < 2; ++i) {
      if (outputs[i] != NULL) copy_out(call, tensors[i], api->get_data(outputs[i]), element, head_dim);
    }
  }
  api->free_context(ctx);
  return status == GGML_STATUS_SUCCESS ? ROPECHECK_OK : ROPECHECK_ERROR_INTERNAL;
}

static int valid_tensor(const ropecheck_tensor* t) {
  return t->heads == 0 || (t->heads > 0 && t->input != NULL && t->output != NULL);
}

PLUGIN_EXPORT int32_t ropecheck_kernel_apply(const char* implementation, const ropecheck_call* call) {
  rope_params params;
  int32_t status;
  int64_t i;
  const int chosen = pick(implementation);
  if (chosen < 0) return ROPECHECK_ERROR_UNKNOWN_IMPLEMENTATION;
  if (call == NULL || call->spec == NULL || call->tokens < 0) return ROPECHECK_ERROR_INVALID_ARGUMENT;
  if (chosen == 0) return ROPECHECK_ERROR_UNAVAILABLE;
  if (call->cos_cache != NULL || call->device_pointers != 0) return ROPECHECK_ERROR_UNSUPPORTED;
  if (call->tokens == 0) return ROPECHECK_OK;
  if (call->positions == NULL || call->q.heads <= 0 || !valid_tensor(&call->q) || !valid_tensor(&call->k)) {
    return ROPECHECK_ERROR_INVALID_ARGUMENT;
  }
  status = map_spec(call->spec, &params);
  if (status == ROPECHECK_OK) {
    /* ggml positions are int32 */
    for (i = 0; i < call->tokens * call->spec->position_components; ++i) {
      if (call->positions[i] < INT32_MIN || call->positions[i] > INT32_MAX) status = ROPECHECK_ERROR_UNSUPPORTED;
    }
  }
  if (status == ROPECHECK_OK) status = run(&g_variants[chosen - 1].api, call, &params);
  free(params.freq_factors);
  return status;
}
