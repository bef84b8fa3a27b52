/* A minimal RoPE kernel plugin in C99 — the template for third-party implementations, and one that
 * passes its own gate (`ropecheck run --plugin libropecheck_example_plugin.so --props`: CI runs it).
 *
 * It implements include/ropecheck/kernel.h for one implementation, "example_c": float32 data, with
 * θ_j = base^(-2j/d) (/ factor for linear scaling) by powl, the angle position·θ_j, cosl/sinl, and
 * the rotation all in long double, then one rounding to float. Everything else is reported as
 * unsupported, never guessed: scalings other than none/linear, multi-axis specs, f64/f16/bf16, the
 * cos/sin cache and device pointers. It reads only the decoded spec fields, not the spec text.
 *
 * Why long double, and why float32 only: the angle must be accurate to a small fraction of the
 * output's unit at every position up to 2^31 − 1 (docs/design.md). In long double (x87: 64-bit
 * significand; binary128 on AArch64) θ_j and the product p·θ_j are each within about 2^-63
 * relative, so the angle is within 2^-62·|p·θ_j| ≤ 2^-31 rad for |p·θ_j| ≤ 2^31; cosl/sinl add about
 * 2^-63 and the rotation a few 2^-64. Against float32's unit u = 2^-24 that is e ≤ 1 (the final
 * rounding) + √2·2^-31/2^-24 + tiny ≈ 1.012, well within the gate's default e ≤ 4. For float64
 * data (u = 2^-53) the same 2^-31 rad would be e ≈ 2^22: the plugin says so (unsupported) rather
 * than fail. (Recomputing θ_j per call is simple, not fast.)
 *
 * Build: cc -shared -fPIC -I<ropecheck>/include rope_plugin.c -o librope_plugin.so -lm */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ropecheck/kernel.h>

#if defined(__GNUC__)
#define PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define PLUGIN_EXPORT
#endif

static const char* const kName = "example_c";

PLUGIN_EXPORT uint32_t ropecheck_kernel_abi_version(void) { return ROPECHECK_KERNEL_ABI_VERSION; }
PLUGIN_EXPORT int32_t ropecheck_kernel_count(void) { return 1; }
PLUGIN_EXPORT const char* ropecheck_kernel_name(int32_t index) { return index == 0 ? kName : NULL; }

static int known(const char* implementation) {
  return implementation == NULL || strcmp(implementation, "auto") == 0 || strcmp(implementation, kName) == 0;
}

PLUGIN_EXPORT int32_t ropecheck_kernel_available(const char* implementation) {
  return known(implementation) ? 1 : ROPECHECK_ERROR_UNKNOWN_IMPLEMENTATION;
}

PLUGIN_EXPORT const char* ropecheck_kernel_resolve(const char* implementation) {
  return known(implementation) ? kName : NULL;
}

static long double load(const void* base, int64_t index) { return (long double)((const float*)base)[index]; }

/* One rounding, long double to float (round to nearest even). */
static void store(void* base, int64_t index, long double value) { ((float*)base)[index] = (float)value; }

/* One tensor; cos/sin per pair are recomputed per head (simple, not fast). In place is safe:
 * both elements of a pair are read before either is written. */
static void rotate_tensor(const ropecheck_spec* spec, const ropecheck_call* call, const ropecheck_tensor* t,
                          const long double* theta) {
  const int32_t pairs = spec->rotary_dim / 2;
  const size_t element = ropecheck_dtype_size(spec->dtype);
  int64_t token, head;
  int32_t j, i;
  for (token = 0; token < call->tokens; ++token) {
    const long double position = (long double)call->positions[token];
    for (head = 0; head < t->heads; ++head) {
      const int64_t in = token * t->input_token_stride + head * t->input_head_stride;
      const int64_t out = token * t->output_token_stride + head * t->output_head_stride;
      for (j = 0; j < pairs; ++j) {
        const int32_t first = spec->layout == ROPECHECK_LAYOUT_INTERLEAVED ? 2 * j : j;
        const int32_t second = spec->layout == ROPECHECK_LAYOUT_INTERLEAVED ? 2 * j + 1 : j + pairs;
        const long double angle = position * theta[j];
        const long double c = cosl(angle);
        const long double s = spec->direction == ROPECHECK_DIRECTION_INVERSE ? -sinl(angle) : sinl(angle);
        const long double x = load(t->input, in + first);
        const long double y = load(t->input, in + second);
        store(t->output, out + first, x * c - y * s);
        store(t->output, out + second, x * s + y * c);
      }
      if (t->output != t->input) { /* pass-through dims, bit for bit */
        for (i = spec->rotary_dim; i < spec->head_dim; ++i) {
          memcpy((char*)t->output + (size_t)(out + i) * element, (const char*)t->input + (size_t)(in + i) * element, element);
        }
      }
    }
  }
}

PLUGIN_EXPORT int32_t ropecheck_kernel_apply(const char* implementation, const ropecheck_call* call) {
  const ropecheck_spec* spec;
  long double* theta;
  int32_t j;
  if (!known(implementation)) return ROPECHECK_ERROR_UNKNOWN_IMPLEMENTATION;
  if (call == NULL || call->spec == NULL || call->tokens < 0) return ROPECHECK_ERROR_INVALID_ARGUMENT;
  spec = call->spec;
  if (spec->head_dim < 2 || spec->rotary_dim < 2 || spec->rotary_dim > spec->head_dim || spec->rotary_dim % 2 != 0 ||
      !(spec->base > 1.0)) {
    return ROPECHECK_ERROR_INVALID_SPEC;
  }
  if (spec->scaling != ROPECHECK_SCALING_NONE && spec->scaling != ROPECHECK_SCALING_LINEAR) return ROPECHECK_ERROR_UNSUPPORTED;
  if (spec->axes != ROPECHECK_AXES_NONE) return ROPECHECK_ERROR_UNSUPPORTED;
  if (spec->dtype != ROPECHECK_DTYPE_F32) return ROPECHECK_ERROR_UNSUPPORTED;
  if (call->cos_cache != NULL || call->device_pointers != 0) return ROPECHECK_ERROR_UNSUPPORTED;
  if (call->tokens > 0 && (call->positions == NULL || call->q.heads <= 0 || call->q.input == NULL || call->q.output == NULL)) {
    return ROPECHECK_ERROR_INVALID_ARGUMENT;
  }
  theta = (long double*)malloc(sizeof(long double) * (size_t)(spec->rotary_dim / 2));
  if (theta == NULL) return ROPECHECK_ERROR_INTERNAL;
  for (j = 0; j < spec->rotary_dim / 2; ++j) { /* θ_j = b^(-2j/d) (RoFormer), / f for linear */
    theta[j] = powl((long double)spec->base, -2.0L * j / spec->rotary_dim);
    if (spec->scaling == ROPECHECK_SCALING_LINEAR) theta[j] /= (long double)spec->factor;
  }
  rotate_tensor(spec, call, &call->q, theta);
  if (call->k.heads > 0) rotate_tensor(spec, call, &call->k, theta);
  free(theta);
  return ROPECHECK_OK;
}
