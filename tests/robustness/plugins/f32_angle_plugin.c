/* A deliberately wrong plugin for the fuzz tests: the common float32 recipe (docs/rope.md §5) — θ_j =
 * powf(base, -2j/d) and the angle p·θ_j both in float32 — then cos/sin and the rotation in double,
 * one rounding to float32. Its angle error ≈ p·θ_j·2^-24 makes e grow linearly with the position,
 * so `ropecheck fuzz` must report a tolerance breach. Only f32, no scaling, one axis. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <ropecheck/kernel.h>

uint32_t ropecheck_kernel_abi_version(void) { return ROPECHECK_KERNEL_ABI_VERSION; }
int32_t ropecheck_kernel_count(void) { return 1; }
const char* ropecheck_kernel_name(int32_t index) { return index == 0 ? "f32-angle" : NULL; }
int32_t ropecheck_kernel_available(const char* implementation) {
  (void)implementation;
  return 1;
}
const char* ropecheck_kernel_resolve(const char* implementation) {
  (void)implementation;
  return "f32-angle";
}

int32_t ropecheck_kernel_apply(const char* implementation, const ropecheck_call* call) {
  (void)implementation;
  if (call == NULL || call->spec == NULL || call->positions == NULL) return ROPECHECK_ERROR_INVALID_ARGUMENT;
  const ropecheck_spec* spec = call->spec;
  if (spec->dtype != ROPECHECK_DTYPE_F32 || spec->scaling != ROPECHECK_SCALING_NONE || spec->axes != ROPECHECK_AXES_NONE ||
      call->cos_cache != NULL || call->k.heads != 0 || call->device_pointers != 0) {
    return ROPECHECK_ERROR_UNSUPPORTED;
  }
  const int32_t pairs = spec->rotary_dim / 2;
  const double sign = spec->direction == ROPECHECK_DIRECTION_INVERSE ? -1.0 : 1.0;
  for (int64_t t = 0; t < call->tokens; ++t) {
    const float position = (float)call->positions[t];
    for (int64_t h = 0; h < call->q.heads; ++h) {
      const float* in = (const float*)call->q.input + t * call->q.input_token_stride + h * call->q.input_head_stride;
      float* out = (float*)call->q.output + t * call->q.output_token_stride + h * call->q.output_head_stride;
      for (int32_t i = spec->rotary_dim; i < spec->head_dim; ++i) out[i] = in[i];
      for (int32_t j = 0; j < pairs; ++j) {
        const float theta = powf((float)spec->base, -2.0f * (float)j / (float)spec->rotary_dim);
        const double angle = sign * (double)(position * theta); /* the float32 product: the bug */
        const int32_t first = spec->layout == ROPECHECK_LAYOUT_HALF ? j : 2 * j;
        const int32_t second = spec->layout == ROPECHECK_LAYOUT_HALF ? j + pairs : 2 * j + 1;
        const double x = in[first], y = in[second];
        out[first] = (float)(x * cos(angle) - y * sin(angle));
        out[second] = (float)(x * sin(angle) + y * cos(angle));
      }
    }
  }
  return ROPECHECK_OK;
}
