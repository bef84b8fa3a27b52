/* The kernel ABI from C: include/ropecheck/kernel.h must compile as C and its functions be callable
 * from C. Rotates one f32 pair by a known angle and checks the result against cos/sin values that
 * are exact facts (position 0: identity; and the pass-through dims), plus the status codes. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <ropecheck/kernel.h>

static int failures = 0;
#define CHECK(condition)                                            \
  do {                                                              \
    if (!(condition)) {                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #condition); \
      ++failures;                                                   \
    }                                                               \
  } while (0)

int main(void) {
  CHECK(ropecheck_kernel_abi_version() == ROPECHECK_KERNEL_ABI_VERSION);
  CHECK(ropecheck_kernel_count() == 5);
  CHECK(strcmp(ropecheck_kernel_name(0), "scalar") == 0);
  CHECK(ropecheck_kernel_name(5) == NULL);
  CHECK(ropecheck_kernel_available("scalar") == 1);
  CHECK(ropecheck_kernel_available("no-such-kernel") == ROPECHECK_ERROR_UNKNOWN_IMPLEMENTATION);
  CHECK(ropecheck_kernel_resolve("auto") != NULL);
  printf("auto runs as: %s\n", ropecheck_kernel_resolve("auto"));

  ropecheck_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.spec = "layout=interleaved,head_dim=4,rotary_dim=2,base=10000,dtype=f32";
  spec.layout = ROPECHECK_LAYOUT_INTERLEAVED;
  spec.head_dim = 4;
  spec.rotary_dim = 2;
  spec.direction = ROPECHECK_DIRECTION_FORWARD;
  spec.dtype = ROPECHECK_DTYPE_F32;
  spec.base = 10000.0;
  spec.scaling = ROPECHECK_SCALING_NONE;
  spec.axes = ROPECHECK_AXES_NONE;
  spec.position_components = 1;

  /* two tokens: position 0 (identity rotation), position 1 (θ_0 = 1 rad) */
  float input[8] = {3.0f, -2.0f, 0.5f, -0.25f, 1.0f, 0.0f, 7.0f, 8.0f};
  float output[8];
  int64_t positions[2] = {0, 1};
  ropecheck_call call;
  memset(&call, 0, sizeof call);
  call.spec = &spec;
  call.tokens = 2;
  call.positions = positions;
  call.q.heads = 1;
  call.q.input = input;
  call.q.input_token_stride = 4;
  call.q.input_head_stride = 4;
  call.q.output = output;
  call.q.output_token_stride = 4;
  call.q.output_head_stride = 4;
  CHECK(ropecheck_kernel_apply("scalar", &call) == ROPECHECK_OK);
  CHECK(output[0] == 3.0f && output[1] == -2.0f); /* R_0 = I exactly */
  CHECK(output[2] == 0.5f && output[3] == -0.25f && output[6] == 7.0f && output[7] == 8.0f); /* pass-through */
  /* (1, 0) rotated by 1 rad = (cos 1, sin 1); correctly rounded to f32 within one ulp */
  CHECK(fabs(output[4] - 0.5403023058681398) <= 6e-8);
  CHECK(fabs(output[5] - 0.8414709848078965) <= 6e-8);

  call.q.output_head_stride = 4;
  call.tokens = -1;
  CHECK(ropecheck_kernel_apply("scalar", &call) == ROPECHECK_ERROR_INVALID_ARGUMENT);
  call.tokens = 2;
  spec.head_dim = 8; /* contradicts the text */
  CHECK(ropecheck_kernel_apply("scalar", &call) == ROPECHECK_ERROR_INVALID_SPEC);
  spec.head_dim = 4;
  CHECK(ropecheck_kernel_apply("no-such-kernel", &call) == ROPECHECK_ERROR_UNKNOWN_IMPLEMENTATION);
  CHECK(strcmp(ropecheck_status_message(ROPECHECK_ERROR_UNSUPPORTED), "unsupported spec or option") == 0);
  if (failures == 0) printf("c_abi_test: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
