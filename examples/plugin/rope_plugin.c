/* A minimal RoPE kernel plugin in C99 — the template for third-party implementations.
 *
 * It implements include/ropecheck/kernel.h for one implementation, "example_c": the textbook
 * float64 recipe (θ_j = base^(-2j/d) / factor by pow, angle = position·θ_j, libm cos/sin, rotation
 * in double, one rounding to the output type). Everything else is reported as unsupported, never
 * guessed: scalings other than none/linear, multi-axis specs, f16/bf16, the cos/sin cache and device
 * pointers. It reads only the decoded spec fields, not the spec text.
 *
 * Its accuracy is NOT position-independent: the angle p·θ_j is rounded to double, an absolute
 * error up to |p·θ_j|·2^-52 rad, which the gate's sweep shows growing with position.
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

static double load(const void* base, int64_t index, int32_t dtype) {
  return dtype == ROPECHECK_DTYPE_F64 ? ((const double*)base)[index] : (double)((const float*)base)[index];
}

static void store(void* base, int64_t index, int32_t dtype, double value) {
  if (dtype == ROPECHECK_DTYPE_F64) {
    ((double*)base)[index] = value;
  } else {
    ((float*)base)[index] = (float)value;
  }
}

/* One tensor; cos/sin per pair are recomputed per head (simple, not fast). In place is safe:
 * both elements of a pair are read before either is written. */
static void rotate_tensor(const ropecheck_spec* spec, const ropecheck_call* call, const ropecheck_tensor* t,
                          const double* theta) {
  const int32_t pairs = spec->rotary_dim / 2;
  const size_t element = ropecheck_dtype_size(spec->dtype);
  int64_t token, head;
  int32_t j, i;
  for (token = 0; token < call->tokens; ++token) {
    const double position = (double)call->positions[token];
    for (head = 0; head < t->heads; ++head) {
      const int64_t in = token * t->input_token_stride + head * t->input_head_stride;
      const int64_t out = token * t->output_token_stride + head * t->output_head_stride;
      for (j = 0; j < pairs; ++j) {
        const int32_t first = spec->layout == ROPECHECK_LAYOUT_INTERLEAVED ? 2 * j : j;
        const int32_t second = spec->layout == ROPECHECK_LAYOUT_INTERLEAVED ? 2 * j + 1 : j + pairs;
        const double angle = position * theta[j];
        const double c = cos(angle);
        const double s = spec->direction == ROPECHECK_DIRECTION_INVERSE ? -sin(angle) : sin(angle);
        const double x = load(t->input, in + first, spec->dtype);
        const double y = load(t->input, in + second, spec->dtype);
        store(t->output, out + first, spec->dtype, x * c - y * s);
        store(t->output, out + second, spec->dtype, x * s + y * c);
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
  double* theta;
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
  if (spec->dtype != ROPECHECK_DTYPE_F32 && spec->dtype != ROPECHECK_DTYPE_F64) return ROPECHECK_ERROR_UNSUPPORTED;
  if (call->cos_cache != NULL || call->device_pointers != 0) return ROPECHECK_ERROR_UNSUPPORTED;
  if (call->tokens > 0 && (call->positions == NULL || call->q.heads <= 0 || call->q.input == NULL || call->q.output == NULL)) {
    return ROPECHECK_ERROR_INVALID_ARGUMENT;
  }
  theta = (double*)malloc(sizeof(double) * (size_t)(spec->rotary_dim / 2));
  if (theta == NULL) return ROPECHECK_ERROR_INTERNAL;
  for (j = 0; j < spec->rotary_dim / 2; ++j) { /* θ_j = b^(-2j/d) (seed 004), / f for linear */
    theta[j] = pow(spec->base, -2.0 * j / spec->rotary_dim);
    if (spec->scaling == ROPECHECK_SCALING_LINEAR) theta[j] /= spec->factor;
  }
  rotate_tensor(spec, call, &call->q, theta);
  if (call->k.heads > 0) rotate_tensor(spec, call, &call->k, theta);
  free(theta);
  return ROPECHECK_OK;
}
