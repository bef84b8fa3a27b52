/* ropecheck fused C ABI, version 1: RMSNorm → RoPE → FP8 quantization → (paged) KV cache in one call.
 *
 * A plugin (a shared library loaded by `ropecheck fused check --plugin lib.so`) exports the entry
 * point `ropecheck_fused_v1` below. The version is in the symbol's name: a later version of the
 * call struct is a new symbol (`ropecheck_fused_v2`), so a gate finds the version it speaks or
 * reports the entry point missing, and never reads a struct of another layout. The call struct
 * also carries its version (ROPECHECK_FUSED_ABI_VERSION) for a plugin that checks it.
 *
 * What a call computes (fused/README.md; the spec keys there): for every token t and every head of
 * q (q_heads) and of k (k_heads), on the head's head_dim values x:
 *   norm = before:  x ← RMSNorm(x) = x / sqrt(mean(x²) + eps) · w   (w, or 1 + w for norm_weight one_plus;
 *                   q with q_weight, k with k_weight)
 *   the rotation of the spec (include/ropecheck/kernel.h "What a call computes") at token t's positions
 *   norm = after:   the same RMSNorm after the rotation
 *   fp8 = none:     the result rounded to the data dtype (rope->dtype)
 *   fp8 = e4m3|e5m2: the result divided by the scale, quantized to the FP8 format (round to nearest
 *                   even; saturating to ±max or not), stored as its one-byte OCP code. The scale is
 *                   the spec's (scale = fixed) or chosen by the implementation and returned (per_token:
 *                   one per token and tensor; per_head: one per token, head and tensor).
 * q's result goes to q_out; k's to k_out (destination contiguous) or, destination paged, to slot
 * s = slot_mapping[t] of the cache: row s % block_size of block s / block_size (a token with slot -1
 * is not written).
 *
 * Conventions as kernel.h's: thread-safe, nothing to free, a negative status (ROPECHECK_ERROR_*) on
 * error, ROPECHECK_ERROR_UNSUPPORTED for a valid spec the implementation does not compute exactly
 * as specified (never a guess). Only <stdint.h>, <stddef.h> and kernel.h are included: the header
 * compiles as C99 and as C++. */
#ifndef ROPECHECK_FUSED_H
#define ROPECHECK_FUSED_H

#include <stddef.h>
#include <stdint.h>

#include "kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ROPECHECK_FUSED_ABI_VERSION 1u
/* The entry point's name for this version. */
#define ROPECHECK_FUSED_ENTRY_POINT "ropecheck_fused_v1"

/* ---- enumerations (the values of fused/fused.h's enums, in the same order) --------------------- */
#define ROPECHECK_NORM_NONE 0
#define ROPECHECK_NORM_BEFORE 1
#define ROPECHECK_NORM_AFTER 2

#define ROPECHECK_NORM_WEIGHT_PLAIN 0    /* x̂·w */
#define ROPECHECK_NORM_WEIGHT_ONE_PLUS 1 /* x̂·(1 + w) */

#define ROPECHECK_FP8_NONE 0
#define ROPECHECK_FP8_E4M3 1 /* OCP E4M3FN: no infinity, NaN 0x7f/0xff, max 448 */
#define ROPECHECK_FP8_E5M2 2 /* OCP E5M2: ±Inf, max 57344 */

#define ROPECHECK_SCALE_FIXED 0
#define ROPECHECK_SCALE_PER_TOKEN 1
#define ROPECHECK_SCALE_PER_HEAD 2

#define ROPECHECK_ROUNDING_ONCE 0         /* one rounding at the end */
#define ROPECHECK_ROUNDING_INTERMEDIATE 1 /* rounded to the data dtype before the quantization */

#define ROPECHECK_DESTINATION_CONTIGUOUS 0
#define ROPECHECK_DESTINATION_PAGED 1

/* ---- the spec ------------------------------------------------------------------------------------
 * `spec` is the canonical fused spec text (the rotation's canonical text, then every fused key);
 * the other fields are the same information decoded. Decimals (eps, scale_value) are the nearest
 * double; an implementation that needs them exactly reads `spec`. */
typedef struct ropecheck_fused_spec {
  const char* spec;
  const ropecheck_spec* rope; /* the rotation (kernel.h); rope->dtype is the data dtype */
  int32_t norm;               /* ROPECHECK_NORM_* */
  int32_t norm_weight;        /* ROPECHECK_NORM_WEIGHT_* */
  double eps;                 /* >= 0 */
  int32_t fp8;                /* ROPECHECK_FP8_* */
  int32_t saturate;           /* 1: values past the format's max become ±max; 0: NaN (E4M3) or ±Inf (E5M2) */
  int32_t scale;              /* ROPECHECK_SCALE_* (FP8 only) */
  double scale_value;         /* the fixed scale, > 0 */
  int32_t rounding;           /* ROPECHECK_ROUNDING_* */
  int32_t destination;        /* ROPECHECK_DESTINATION_* */
  int32_t block_size;         /* tokens per cache block (paged) */
  int32_t q_heads;
  int32_t k_heads;
} ropecheck_fused_spec;

/* ---- one call ------------------------------------------------------------------------------------
 * Every tensor is row-major and contiguous. Element types: q, k, q_weight, k_weight are of
 * `input_dtype` (ROPECHECK_DTYPE_*: rope->dtype unless the spec has an input_dtype); q_out, k_out and
 * k_cache are of rope->dtype without FP8 and one-byte FP8 codes with it; scales are float. */
typedef struct ropecheck_fused_call {
  uint32_t abi_version; /* ROPECHECK_FUSED_ABI_VERSION of the caller */
  const ropecheck_fused_spec* spec;
  int32_t input_dtype;
  int64_t tokens;
  const void* q;               /* [tokens][q_heads][head_dim] */
  const void* k;               /* [tokens][k_heads][head_dim] */
  const int64_t* positions;    /* [tokens][rope->position_components] */
  const void* q_weight;        /* [head_dim]; NULL without a norm */
  const void* k_weight;        /* [head_dim]; NULL without a norm */
  const int64_t* slot_mapping; /* [tokens] (paged; -1: skip the token); NULL when contiguous */
  int64_t num_blocks;          /* paged: blocks in k_cache; 0 when contiguous */
  void* q_out;                 /* [tokens][q_heads][head_dim] */
  void* k_out;                 /* contiguous: [tokens][k_heads][head_dim]; NULL when paged */
  void* k_cache;               /* paged: [num_blocks][block_size][k_heads][head_dim]; NULL when contiguous */
  float* q_scale;              /* per_token: [tokens]; per_head: [tokens][q_heads]; NULL otherwise */
  float* k_scale;              /* per_token: [tokens]; per_head: [tokens][k_heads]; NULL otherwise */
  int32_t threads;             /* CPU threads to use: 0 = all cores */
} ropecheck_fused_call;

/* The entry point of version 1: computes the call. ROPECHECK_OK or a negative status. */
int32_t ropecheck_fused_v1(const ropecheck_fused_call* call);
typedef int32_t (*ropecheck_fused_v1_fn)(const ropecheck_fused_call* call);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ROPECHECK_FUSED_H */
