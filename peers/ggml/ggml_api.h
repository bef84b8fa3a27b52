/* The few functions of llama.cpp's ggml (built by peers/ggml/build_ggml.sh) that ropecheck calls,
 * loaded at run time: the declarations (from ggml's public headers ggml.h, ggml-cpu.h,
 * ggml-backend.h of the ggml-org/ggml repository; signatures and enum values only, so that nothing
 * of ggml is needed to build), a table of function pointers, and the loader of one CPU variant
 * library libggml-cpu-<isa>.so.
 *
 * Shared by the plugin (ggml_plugin.c, C99) and bench/peers_bench.cpp (C++): everything is
 * static inline, the header holds no state. Callers dlopen nothing themselves: ggml_variant_load
 * opens a variant by absolute path (it finds libggml-base.so through its RUNPATH $ORIGIN) and keeps
 * the handle in the ggml_variant it fills; ggml_best_variant picks the one llama.cpp would (the
 * highest ggml_backend_score()). */
#ifndef ROPECHECK_PEERS_GGML_API_H
#define ROPECHECK_PEERS_GGML_API_H

#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- declarations from ggml's public headers (ggml.h, ggml-cpu.h, ggml-backend.h) ---------------- */
struct ggml_context;
struct ggml_tensor;
struct ggml_cgraph;
struct ggml_init_params { /* ggml.h, passed by value to ggml_init */
  size_t mem_size;
  void* mem_buffer;
  bool no_alloc;
};
enum { GGML_TYPE_F32 = 0, GGML_TYPE_F16 = 1, GGML_TYPE_I32 = 26 };                 /* enum ggml_type */
enum { GGML_ROPE_TYPE_NORMAL = 0, GGML_ROPE_TYPE_NEOX = 2, GGML_ROPE_TYPE_MROPE = 8 }; /* rope modes */
enum { GGML_MROPE_SECTIONS = 4 };
enum { GGML_STATUS_SUCCESS = 0 };

typedef struct ggml_context* (*ggml_init_fn)(struct ggml_init_params);
typedef void (*ggml_free_fn)(struct ggml_context*);
typedef struct ggml_tensor* (*ggml_new_tensor_1d_fn)(struct ggml_context*, int, int64_t);
typedef struct ggml_tensor* (*ggml_new_tensor_3d_fn)(struct ggml_context*, int, int64_t, int64_t, int64_t);
typedef struct ggml_tensor* (*ggml_rope_ext_fn)(struct ggml_context*, struct ggml_tensor* a, struct ggml_tensor* b,
                                                struct ggml_tensor* c, int n_dims, int mode, int n_ctx_orig,
                                                float freq_base, float freq_scale, float ext_factor,
                                                float attn_factor, float beta_fast, float beta_slow);
typedef struct ggml_tensor* (*ggml_rope_multi_fn)(struct ggml_context*, struct ggml_tensor* a, struct ggml_tensor* b,
                                                  struct ggml_tensor* c, int n_dims, int sections[GGML_MROPE_SECTIONS],
                                                  int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                                  float ext_factor, float attn_factor, float beta_fast,
                                                  float beta_slow);
typedef struct ggml_cgraph* (*ggml_new_graph_fn)(struct ggml_context*);
typedef void (*ggml_build_forward_expand_fn)(struct ggml_cgraph*, struct ggml_tensor*);
typedef void* (*ggml_get_data_fn)(const struct ggml_tensor*);
typedef size_t (*ggml_size_fn)(void);
typedef size_t (*ggml_context_size_fn)(const struct ggml_context*);
typedef const char* (*ggml_version_fn)(void);
typedef int (*ggml_backend_score_fn)(void);                                           /* variant library */
typedef void (*ggml_cpu_init_fn)(void);                                               /* variant library */
typedef int (*ggml_graph_compute_with_ctx_fn)(struct ggml_context*, struct ggml_cgraph*, int); /* variant */

typedef struct ggml_api {
  ggml_init_fn init;
  ggml_free_fn free_context;
  ggml_new_tensor_1d_fn new_tensor_1d;
  ggml_new_tensor_3d_fn new_tensor_3d;
  ggml_rope_ext_fn rope_ext, rope_ext_back;
  ggml_rope_multi_fn rope_multi, rope_multi_back;
  ggml_new_graph_fn new_graph;
  ggml_build_forward_expand_fn build_forward_expand;
  ggml_get_data_fn get_data;
  ggml_size_fn tensor_overhead, graph_overhead;
  ggml_context_size_fn used_mem, get_mem_size; /* bytes of the context taken, and its size */
  ggml_version_fn version;
  ggml_backend_score_fn backend_score;
  ggml_cpu_init_fn cpu_init;
  /* Plans the graph and takes its work buffer from ctx (ggml_new_buffer) on EVERY call: a context
   * computed repeatedly needs room for one work buffer per call, or ggml aborts. */
  ggml_graph_compute_with_ctx_fn graph_compute_with_ctx;
} ggml_api;

/* ---- the CPU variants ----------------------------------------------------------------------------
 * The <isa> of every libggml-cpu-<isa>.so of llama.cpp's x86 builds (peers/ggml/README.md), as an
 * X-macro so that callers can spell the names as they need them ("ggml-x64", "x64"). x64 and sse42
 * are built without FMA, haswell and later with it. */
#define GGML_CPU_VARIANTS(X)                                                                              \
  X(x64) X(sse42) X(sandybridge) X(ivybridge) X(piledriver) X(haswell) X(skylakex) X(cannonlake)            \
  X(cascadelake) X(icelake) X(cooperlake) X(zen4) X(alderlake) X(sapphirerapids)

typedef struct ggml_variant {
  int tried;    /* load attempted */
  int score;    /* ggml_backend_score(); 0 = cannot run here (or not loaded) */
  void* handle; /* dlopen handle; NULL when not loaded */
  ggml_api api;
} ggml_variant;

#define GGML_API_RESOLVE(field, name)                            \
  do {                                                           \
    *(void**)(&api->field) = dlsym(handle, name);                \
    if (api->field == NULL) return name;                         \
  } while (0)

/* Fills api from a variant's handle (dlsym also searches its dependency libggml-base.so).
 * Returns NULL, or the name of the first missing symbol. */
static inline const char* ggml_api_resolve(void* handle, ggml_api* api) {
  GGML_API_RESOLVE(init, "ggml_init");
  GGML_API_RESOLVE(free_context, "ggml_free");
  GGML_API_RESOLVE(new_tensor_1d, "ggml_new_tensor_1d");
  GGML_API_RESOLVE(new_tensor_3d, "ggml_new_tensor_3d");
  GGML_API_RESOLVE(rope_ext, "ggml_rope_ext");
  GGML_API_RESOLVE(rope_ext_back, "ggml_rope_ext_back");
  GGML_API_RESOLVE(rope_multi, "ggml_rope_multi");
  GGML_API_RESOLVE(rope_multi_back, "ggml_rope_multi_back");
  GGML_API_RESOLVE(new_graph, "ggml_new_graph");
  GGML_API_RESOLVE(build_forward_expand, "ggml_build_forward_expand");
  GGML_API_RESOLVE(get_data, "ggml_get_data");
  GGML_API_RESOLVE(tensor_overhead, "ggml_tensor_overhead");
  GGML_API_RESOLVE(graph_overhead, "ggml_graph_overhead");
  GGML_API_RESOLVE(used_mem, "ggml_used_mem");
  GGML_API_RESOLVE(get_mem_size, "ggml_get_mem_size");
  GGML_API_RESOLVE(version, "ggml_version");
  GGML_API_RESOLVE(backend_score, "ggml_backend_score");
  GGML_API_RESOLVE(cpu_init, "ggml_cpu_init");
  GGML_API_RESOLVE(graph_compute_with_ctx, "ggml_graph_compute_with_ctx");
  return NULL;
}
#undef GGML_API_RESOLVE

/* Loads $dir/libggml-cpu-<isa>.so into v once (v->tried), resolves its api and asks its score;
 * ggml_cpu_init() runs when it can run here (score > 0). Returns 1 when loaded (the score may still
 * be 0), else 0; on the first, failed attempt *what says why (a fixed text) and *detail is NULL or
 * a further string (dlerror(), the missing symbol); both are NULL otherwise. */
static inline int ggml_variant_load(ggml_variant* v, const char* dir, const char* isa, const char** what,
                                    const char** detail) {
  char path[4096];
  const char* missing;
  *what = NULL;
  *detail = NULL;
  if (v->tried) return v->handle != NULL;
  v->tried = 1;
  if (dir == NULL || dir[0] == '\0') {
    *what = "ROPECHECK_GGML_DIR is not set (the folder holding libggml-base.so and libggml-cpu-*.so)";
    return 0;
  }
  if (snprintf(path, sizeof path, "%s/libggml-cpu-%s.so", dir, isa) >= (int)sizeof path) {
    *what = "ROPECHECK_GGML_DIR is too long";
    return 0;
  }
  v->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (v->handle == NULL) {
    *what = "cannot load";
    *detail = dlerror();
    return 0;
  }
  missing = ggml_api_resolve(v->handle, &v->api);
  if (missing != NULL) {
    *what = "missing symbol";
    *detail = missing;
    dlclose(v->handle);
    v->handle = NULL;
    return 0;
  }
  v->score = v->api.backend_score();
  if (v->score > 0) v->api.cpu_init();
  return 1;
}

/* The index of the loaded variant with the highest ggml_backend_score() (the first on a tie, as
 * llama.cpp's registry keeps the first best), or -1 when none can run here. */
static inline int ggml_best_variant(const ggml_variant* variants, int count) {
  int best = -1, i;
  for (i = 0; i < count; ++i) {
    if (variants[i].score > 0 && (best < 0 || variants[i].score > variants[best].score)) best = i;
  }
  return best;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ROPECHECK_PEERS_GGML_API_H */
