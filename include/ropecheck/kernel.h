/* ropecheck kernel C ABI, version 1.
 *
 * One header serves two roles:
 *   1. the ropecheck kernel library (target `ropecheck_kernels`) implements these functions with
 *      its own kernels, selected by name: "scalar", "avx2", "avx512", "avx512bf16", "cuda", or
 *      "auto";
 *   2. a third-party plugin (a shared library loaded by `ropecheck run --plugin lib.so`) exports
 *      the SAME six entry points below (ropecheck_kernel_abi_version ... ropecheck_kernel_apply)
 *      so that the gate can run it on the golden inputs. examples/plugin/ is a minimal one in C.
 *
 * What a call computes (docs/rope.md §1, docs/design.md "Core vocabulary"): for every token t, every head h
 * and every rotary pair j of the spec, with (x, y) the pair's two input elements and
 * α = angle of pair j = position(t, component(j)) · θ'_j  (negated for direction "inverse"),
 *     out_first  = A·(x·cos α − y·sin α)
 *     out_second = A·(x·sin α + y·cos α)
 * where θ'_j is the spec's frequency schedule (spec/schedule.h) and A its attention factor
 * (1 for most scalings). Dimensions rotary_dim .. head_dim-1 pass through bit for bit.
 * Pair j is dims (2j, 2j+1) in layout "interleaved" and (j, j + rotary_dim/2) in layout "half".
 *
 * Conventions: every function is thread-safe; nothing is allocated that the caller must free;
 * negative status = error; an implementation that cannot compute a (valid) spec exactly as
 * specified returns ROPECHECK_ERROR_UNSUPPORTED and never guesses. (ropecheck's own kernels do so
 * for a spec with a frequency θ'_j above 2^16 rad per position — only reachable with scaling
 * factors far below 1 — where their error bound is not proven.)
 *
 * Only <stdint.h> and <stddef.h> are included: the header compiles as C99 and as C++. */
#ifndef ROPECHECK_KERNEL_H
#define ROPECHECK_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version this header describes. ropecheck_kernel_abi_version() returns the version the
 * library or plugin was built with; the gate refuses a plugin whose version differs. */
#define ROPECHECK_KERNEL_ABI_VERSION 1u

/* ---- status codes ---------------------------------------------------------------------------- */
#define ROPECHECK_OK 0
/* A null pointer, a negative size, strides that overlap, positions outside the cache, ... */
#define ROPECHECK_ERROR_INVALID_ARGUMENT (-1)
/* spec text that does not parse, or decoded fields that contradict it. */
#define ROPECHECK_ERROR_INVALID_SPEC (-2)
/* A valid spec (or call option) this implementation does not compute: never a guess. */
#define ROPECHECK_ERROR_UNSUPPORTED (-3)
/* No implementation of that name. */
#define ROPECHECK_ERROR_UNKNOWN_IMPLEMENTATION (-4)
/* The implementation exists but cannot run on this machine (no AVX-512, no GPU). */
#define ROPECHECK_ERROR_UNAVAILABLE (-5)
/* Anything else (an allocation or device failure); the output may be partly written. */
#define ROPECHECK_ERROR_INTERNAL (-6)

/* ---- enumerations (the values of spec/spec.h's enums, in the same order) ----------------------- */
#define ROPECHECK_LAYOUT_INTERLEAVED 0
#define ROPECHECK_LAYOUT_HALF 1

#define ROPECHECK_DIRECTION_FORWARD 0
#define ROPECHECK_DIRECTION_INVERSE 1

/* Element types. f16 = IEEE binary16, bf16 = bfloat16 (the top half of a binary32); both stored as
 * uint16_t bit patterns. Rounding to them is to nearest, ties to even. */
#define ROPECHECK_DTYPE_F64 0
#define ROPECHECK_DTYPE_F32 1
#define ROPECHECK_DTYPE_F16 2
#define ROPECHECK_DTYPE_BF16 3

/* docs/rope.md §2. "yarn" is HF transformers' YaRN, "yarn_ggml" llama.cpp's rope_yarn. */
#define ROPECHECK_SCALING_NONE 0
#define ROPECHECK_SCALING_LINEAR 1
#define ROPECHECK_SCALING_NTK 2
#define ROPECHECK_SCALING_DYNAMIC 3
#define ROPECHECK_SCALING_YARN 4
#define ROPECHECK_SCALING_YARN_GGML 5
#define ROPECHECK_SCALING_LLAMA3 6
#define ROPECHECK_SCALING_LONGROPE 7

/* Multi-axis RoPE: "2d" = 2-D RoPE, docs/rope.md §2 (pair j driven by position component j % 2, with
 * the frequency of index j / 2 over rotary_dim/2 dims); "mrope" = Qwen2-VL M-RoPE (consecutive
 * sections of pairs, section k driven by position component k; a section may be 0, as in ggml's
 * four-section 16/24/24/0); "imrope" = interleaved M-RoPE (Qwen3-VL, ggml's IMROPE): with 3 or 4
 * sections s and sector = j, pair j is driven by component 1 if j % 3 == 1 && j < 3*s[1], else 2
 * if j % 3 == 2 && j < 3*s[2], else (4 sections) 0 if j % 3 == 0 && j < 3*s[0] and 3 otherwise,
 * (3 sections) 0. The frequency of pair j is θ'_j whatever its component. An implementation that
 * does not know an axes value returns ROPECHECK_ERROR_UNSUPPORTED (as for any spec it cannot
 * compute exactly). */
#define ROPECHECK_AXES_NONE 0
#define ROPECHECK_AXES_2D 1
#define ROPECHECK_AXES_MROPE 2
#define ROPECHECK_AXES_IMROPE 3

/* ---- the spec ------------------------------------------------------------------------------------
 * One complete RoPE variant. `spec` is the canonical compact text printed by ropecheck's
 * spec::to_string (decimals exact, e.g. "layout=half,head_dim=128,...,base=500000,..."); the other
 * fields are the same information decoded for implementers who do not want to parse it. Decimal
 * parameters are given as the nearest double; an implementation that needs them exactly reads
 * `spec`. Parameters that do not apply to `scaling` hold their defaults (listed below). */
typedef struct ropecheck_spec {
  const char* spec;        /* canonical text; the ropecheck library reads only this field */
  int32_t layout;          /* ROPECHECK_LAYOUT_* */
  int32_t head_dim;        /* elements per head, > 0 */
  int32_t rotary_dim;      /* even, <= head_dim; dims [rotary_dim, head_dim) pass through */
  int32_t direction;       /* ROPECHECK_DIRECTION_*: inverse rotates by -angle */
  int32_t dtype;           /* ROPECHECK_DTYPE_*: input and output element type (a spec whose
                            * input_dtype differs is never passed: the gate declines it) */
  double base;             /* b in θ_j = b^(-2j/d), > 1 */
  int32_t scaling;         /* ROPECHECK_SCALING_* */
  double factor;           /* f (linear, ntk, dynamic, yarn, llama3, longrope); NaN if not given */
  int64_t original_max_position; /* L0 (yarn, yarn_ggml, llama3, longrope), Lmax (dynamic); else 0 */
  int64_t seq_len;         /* dynamic, longrope: sequence length the call serves; else 0 */
  double beta_fast;        /* yarn, yarn_ggml (default 32) */
  double beta_slow;        /* yarn, yarn_ggml (default 1) */
  int32_t truncate;        /* yarn: 1 = floor/ceil the correction range (default 1) */
  double attention_factor; /* yarn, longrope: explicit factor, NaN when absent */
  double mscale;           /* yarn: NaN when absent */
  double mscale_all_dim;   /* yarn: NaN when absent */
  double freq_scale;       /* yarn_ggml: 1/factor; NaN otherwise */
  double ext_factor;       /* yarn_ggml (default 1) */
  double attn_factor;      /* yarn_ggml (default 1) */
  double low_freq_factor;  /* llama3 (default 1) */
  double high_freq_factor; /* llama3 (default 4) */
  int32_t longrope_factor_count;  /* longrope: rotary_dim/2 (or rotary_dim/4 for 2d); else 0 */
  const double* short_factor;     /* longrope: longrope_factor_count values; else NULL */
  const double* long_factor;      /* longrope: longrope_factor_count values; else NULL */
  int32_t axes;                   /* ROPECHECK_AXES_* */
  int32_t position_components;    /* position values per token: 1, 2 (2d), section_count (mrope, imrope) */
  int32_t section_count;          /* mrope, imrope: number of sections; else 0 */
  const int32_t* sections;        /* mrope, imrope: one count per component, summing to rotary_dim/2; else NULL */
} ropecheck_spec;

/* ---- tensors -------------------------------------------------------------------------------------
 * One [tokens, heads, head_dim] tensor: its input and where the output goes. Strides are in
 * ELEMENTS (not bytes); element (t, h, i) of the input is input[t*input_token_stride +
 * h*input_head_stride + i] — the head dim is contiguous. In place is allowed: output == input with
 * equal strides. Any other overlap between input and output, or between output rows, is invalid.
 * heads == 0 means "no tensor" (used for an absent k). */
typedef struct ropecheck_tensor {
  int64_t heads;
  const void* input;
  int64_t input_token_stride;
  int64_t input_head_stride;
  void* output;
  int64_t output_token_stride;
  int64_t output_head_stride;
} ropecheck_tensor;

/* ---- one call ------------------------------------------------------------------------------------ */
typedef struct ropecheck_call {
  const ropecheck_spec* spec;
  int64_t tokens;
  /* tokens × spec->position_components int64 values, row-major: token t's component k is
   * positions[t*position_components + k]. Any int64 is accepted; the accuracy bounds of the
   * ropecheck kernels hold for |position| < 2^40 (optimized/error_bounds.h). */
  const int64_t* positions;
  ropecheck_tensor q; /* rotated */
  ropecheck_tensor k; /* rotated with the same angles; heads = 0 when absent */
  /* Optional cos/sin cache (as vLLM and ONNX RotaryEmbedding take it). When cos_cache != NULL the
   * implementation does not compute angles: pair j of token t uses
   *   c = cos_cache[row*cache_row_stride + j],  s = sin_cache[row*cache_row_stride + j]
   * with row = positions[t*position_components + component(j)], 0 <= row < cache_rows, and
   * rotates (x, y) -> (x·c − y·s, x·s + y·c) (s negated for direction inverse). The cache values
   * already include any attention factor. Element type cache_dtype (ROPECHECK_DTYPE_*). A vLLM
   * cos_sin_cache [max_position, rotary_dim] is cos_cache = base, sin_cache = base + rotary_dim/2,
   * cache_row_stride = rotary_dim. */
  const void* cos_cache;
  const void* sin_cache;
  int32_t cache_dtype;
  int64_t cache_rows;
  int64_t cache_row_stride; /* elements; >= rotary_dim/2 */
  /* CPU threads to use: 0 = all cores. Ignored by GPU implementations. */
  int32_t threads;
  /* 0: every pointer is host memory (the "cuda" implementation then copies the tensors, positions
   * and cache to the device and the outputs back: simplest for a gate, not fast). 1: q, k,
   * positions and cache are CUDA device pointers of the current device (only the "cuda"
   * implementation accepts this; CPU implementations return ROPECHECK_ERROR_UNSUPPORTED); the
   * call is synchronous, and cache rows are checked on the device before anything is written. */
  int32_t device_pointers;
} ropecheck_call;

/* ---- entry points (exported by the library and by every plugin) ---------------------------------- */

/* ROPECHECK_KERNEL_ABI_VERSION at build time. */
uint32_t ropecheck_kernel_abi_version(void);

/* Number of implementations, and the name of each (index in [0, count)); NULL when out of range.
 * Names are static strings. The library lists "scalar", "avx2", "avx512", "avx512bf16", "cuda" (all
 * of them, built or not: see ropecheck_kernel_available). "auto" is not listed; it is always accepted. */
int32_t ropecheck_kernel_count(void);
const char* ropecheck_kernel_name(int32_t index);

/* 1 if the named implementation can run on this machine, 0 if not, ROPECHECK_ERROR_UNKNOWN_
 * IMPLEMENTATION for an unknown name. "auto" and NULL mean the implementation ropecheck_kernel_apply
 * would pick. Only a call naming "cuda" (available, resolve or apply) initializes the CUDA driver;
 * a process that has done so cannot use CUDA in a child it forks afterwards. */
int32_t ropecheck_kernel_available(const char* implementation);

/* The name of the implementation that `implementation` runs as: itself when available, for "auto"
 * or NULL the one picked (library: the best CPU kernel — "avx512bf16", else "avx512", else "avx2",
 * else "scalar"; CPUID checked once). NULL when unknown or unavailable. Reports print this. */
const char* ropecheck_kernel_resolve(const char* implementation);

/* Applies call->spec to call->q (and call->k). Returns ROPECHECK_OK or a negative status; on error
 * nothing has been written, except for ROPECHECK_ERROR_INTERNAL. */
int32_t ropecheck_kernel_apply(const char* implementation, const ropecheck_call* call);

/* ---- helpers (header-only) ------------------------------------------------------------------------ */
static inline const char* ropecheck_status_message(int32_t status) {
  switch (status) {
    case ROPECHECK_OK: return "ok";
    case ROPECHECK_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case ROPECHECK_ERROR_INVALID_SPEC: return "invalid spec";
    case ROPECHECK_ERROR_UNSUPPORTED: return "unsupported spec or option";
    case ROPECHECK_ERROR_UNKNOWN_IMPLEMENTATION: return "unknown implementation";
    case ROPECHECK_ERROR_UNAVAILABLE: return "implementation unavailable on this machine";
    case ROPECHECK_ERROR_INTERNAL: return "internal error";
    default: return "unknown status";
  }
}

/* Element size in bytes of a ROPECHECK_DTYPE_* value (0 when invalid). */
static inline size_t ropecheck_dtype_size(int32_t dtype) {
  switch (dtype) {
    case ROPECHECK_DTYPE_F64: return 8;
    case ROPECHECK_DTYPE_F32: return 4;
    case ROPECHECK_DTYPE_F16: return 2;
    case ROPECHECK_DTYPE_BF16: return 2;
    default: return 0;
  }
}

/* ---- library-only (not part of the plugin interface) ---------------------------------------------- */

/* Fills cos/sin tables [rows, rotary_dim/2] (row stride rotary_dim/2) for positions
 * first_position .. first_position+rows-1 of a single-axis spec, each entry A·cos(p·θ'_j) and
 * A·sin(p·θ'_j) computed as the on-the-fly kernels do and rounded once to cache_dtype: the cache
 * mode's input, for users and benchmarks that want one. */
int32_t ropecheck_kernel_fill_cache(const ropecheck_spec* spec, int64_t first_position, int64_t rows,
                                    int32_t cache_dtype, void* cos_cache, void* sin_cache);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ROPECHECK_KERNEL_H */
