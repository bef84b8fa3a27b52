/* Tests of the ggml plugin through its C ABI (dlopen, as the gate loads it).
 *
 *   ggml_plugin_test PLUGIN unavailable   ROPECHECK_GGML_DIR unset or wrong: the plugin loads, lists
 *                                         its implementations, says none is available, and apply
 *                                         returns ROPECHECK_ERROR_UNAVAILABLE (never a crash)
 *   ggml_plugin_test PLUGIN available DIR ROPECHECK_GGML_DIR, else DIR, holds ggml's libraries
 *                                         (a folder of peers/ggml/build_ggml.sh; exit 77 =
 *                                         skipped when neither has libggml-base.so): for
 *                                         ggml-best, and ggml-x64 where its library is in the
 *                                         folder, a small rotation against libm, in place and
 *                                         strided, q and k; what ggml cannot express is
 *                                         ROPECHECK_ERROR_UNSUPPORTED
 * Exit 0 when every check passed, 1 otherwise (each failed check printed). */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <ropecheck/kernel.h>

typedef uint32_t (*version_fn)(void);
typedef int32_t (*count_fn)(void);
typedef const char* (*name_fn)(int32_t);
typedef int32_t (*available_fn)(const char*);
typedef const char* (*resolve_fn)(const char*);
typedef int32_t (*apply_fn)(const char*, const ropecheck_call*);

static version_fn abi_version;
static count_fn count;
static name_fn name;
static available_fn available;
static resolve_fn resolve;
static apply_fn apply;
static int failures;

#define CHECK(cond)                                                  \
  do {                                                               \
    if (!(cond)) {                                                   \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                    \
    }                                                                \
  } while (0)

static ropecheck_spec plain_spec(int32_t layout, int32_t dtype) {
  ropecheck_spec s;
  memset(&s, 0, sizeof s);
  s.spec = "";
  s.layout = layout;
  s.head_dim = 6;
  s.rotary_dim = 4;
  s.dtype = dtype;
  s.base = 10000.0;
  s.factor = s.attention_factor = s.mscale = s.mscale_all_dim = s.freq_scale = NAN;
  s.beta_fast = 32;
  s.beta_slow = 1;
  s.ext_factor = s.attn_factor = 1;
  s.low_freq_factor = 1;
  s.high_freq_factor = 4;
  s.position_components = 1;
  return s;
}

/* One token, one head: q = x, strided output; returns apply's status. */
static int32_t run_one(const char* impl, const ropecheck_spec* spec, int64_t position, const void* x, void* out) {
  ropecheck_call call;
  memset(&call, 0, sizeof call);
  call.spec = spec;
  call.tokens = 1;
  call.positions = &position;
  call.q.heads = 1;
  call.q.input = x;
  call.q.input_token_stride = call.q.input_head_stride = spec->head_dim;
  call.q.output = out;
  call.q.output_token_stride = call.q.output_head_stride = spec->head_dim;
  call.threads = 1;
  return apply(impl, &call);
}

static void check_unavailable(void) {
  const ropecheck_spec spec = plain_spec(ROPECHECK_LAYOUT_HALF, ROPECHECK_DTYPE_F32);
  float x[6] = {1, 2, 3, 4, 5, 6}, out[6];
  CHECK(available("ggml-best") == 0);
  CHECK(available("auto") == 0);
  CHECK(available(NULL) == 0);
  CHECK(available("ggml-x64") == 0);
  CHECK(resolve("ggml-best") == NULL);
  CHECK(run_one("ggml-best", &spec, 3, x, out) == ROPECHECK_ERROR_UNAVAILABLE);
  CHECK(run_one("ggml-x64", &spec, 3, x, out) == ROPECHECK_ERROR_UNAVAILABLE);
}

/* Expected rotation of pair (x, y) by position·θ_j, θ_j = 10000^(-2j/4), in double. */
static void rotate(double x, double y, int64_t position, int j, double* a, double* b) {
  const double angle = (double)position * pow(10000.0, -2.0 * j / 4);
  *a = x * cos(angle) - y * sin(angle);
  *b = x * sin(angle) + y * cos(angle);
}

static void check_available(const char* impl) {
  ropecheck_spec spec = plain_spec(ROPECHECK_LAYOUT_HALF, ROPECHECK_DTYPE_F32);
  const float x[6] = {0.5f, -1.25f, 2.0f, 0.75f, 3.0f, -7.0f};
  float out[6];
  double a, b;
  int j;
  CHECK(available(impl) == 1);
  CHECK(resolve(impl) != NULL && strncmp(resolve(impl), "ggml-", 5) == 0 && strcmp(resolve(impl), "ggml-best") != 0);
  /* half: pairs (0, 2) and (1, 3); dims 4, 5 pass through bit for bit */
  CHECK(run_one(impl, &spec, 7, x, out) == ROPECHECK_OK);
  for (j = 0; j < 2; ++j) {
    rotate(x[j], x[j + 2], 7, j, &a, &b);
    CHECK(fabs(out[j] - a) < 1e-5 && fabs(out[j + 2] - b) < 1e-5);
  }
  CHECK(memcmp(&out[4], &x[4], 2 * sizeof(float)) == 0);
  /* interleaved: pairs (0, 1), (2, 3) */
  spec.layout = ROPECHECK_LAYOUT_INTERLEAVED;
  CHECK(run_one(impl, &spec, 7, x, out) == ROPECHECK_OK);
  for (j = 0; j < 2; ++j) {
    rotate(x[2 * j], x[2 * j + 1], 7, j, &a, &b);
    CHECK(fabs(out[2 * j] - a) < 1e-5 && fabs(out[2 * j + 1] - b) < 1e-5);
  }
  /* inverse undoes forward (to rounding) */
  {
    float back[6];
    spec.direction = ROPECHECK_DIRECTION_INVERSE;
    CHECK(run_one(impl, &spec, 7, out, back) == ROPECHECK_OK);
    for (j = 0; j < 4; ++j) CHECK(fabs(back[j] - x[j]) < 1e-5);
    spec.direction = ROPECHECK_DIRECTION_FORWARD;
  }
  /* q and k, two tokens, strided input (head stride 8), in place for k */
  {
    float q[2 * 8], k[2 * 6], q_out[2 * 6];
    int64_t positions[2] = {0, 5};
    ropecheck_call call;
    int t, i;
    for (i = 0; i < 16; ++i) q[i] = (float)(i + 1) / 4;
    for (i = 0; i < 12; ++i) k[i] = (float)(12 - i) / 8;
    memset(&call, 0, sizeof call);
    call.spec = &spec;
    call.tokens = 2;
    call.positions = positions;
    call.q.heads = 1;
    call.q.input = q;
    call.q.input_token_stride = call.q.input_head_stride = 8;
    call.q.output = q_out;
    call.q.output_token_stride = call.q.output_head_stride = 6;
    call.k.heads = 1;
    call.k.input = k;
    call.k.output = k;
    call.k.input_token_stride = call.k.input_head_stride = call.k.output_token_stride = call.k.output_head_stride = 6;
    {
      float k_in[12];
      memcpy(k_in, k, sizeof k);
      CHECK(apply(impl, &call) == ROPECHECK_OK);
      for (t = 0; t < 2; ++t) {
        for (j = 0; j < 2; ++j) {
          rotate(q[t * 8 + 2 * j], q[t * 8 + 2 * j + 1], positions[t], j, &a, &b);
          CHECK(fabs(q_out[t * 6 + 2 * j] - a) < 1e-5 && fabs(q_out[t * 6 + 2 * j + 1] - b) < 1e-5);
          rotate(k_in[t * 6 + 2 * j], k_in[t * 6 + 2 * j + 1], positions[t], j, &a, &b);
          CHECK(fabs(k[t * 6 + 2 * j] - a) < 1e-5 && fabs(k[t * 6 + 2 * j + 1] - b) < 1e-5);
        }
      }
    }
  }
  /* what ggml cannot express */
  {
    double xd[6] = {1, 2, 3, 4, 5, 6}, outd[6];
    ropecheck_spec s = plain_spec(ROPECHECK_LAYOUT_HALF, ROPECHECK_DTYPE_F64);
    CHECK(run_one(impl, &s, 3, xd, outd) == ROPECHECK_ERROR_UNSUPPORTED);
    s = plain_spec(ROPECHECK_LAYOUT_HALF, ROPECHECK_DTYPE_BF16);
    CHECK(run_one(impl, &s, 3, xd, outd) == ROPECHECK_ERROR_UNSUPPORTED);
    s = plain_spec(ROPECHECK_LAYOUT_HALF, ROPECHECK_DTYPE_F32);
    s.base = 10000.1; /* not a float32 */
    CHECK(run_one(impl, &s, 3, x, out) == ROPECHECK_ERROR_UNSUPPORTED);
    s.base = 10000;
    s.scaling = ROPECHECK_SCALING_NTK;
    s.factor = 2;
    CHECK(run_one(impl, &s, 3, x, out) == ROPECHECK_ERROR_UNSUPPORTED);
    s.scaling = ROPECHECK_SCALING_YARN;
    s.original_max_position = 4096;
    CHECK(run_one(impl, &s, 3, x, out) == ROPECHECK_ERROR_UNSUPPORTED);
    s.scaling = ROPECHECK_SCALING_NONE;
    CHECK(run_one(impl, &s, (int64_t)1 << 31, x, out) == ROPECHECK_ERROR_UNSUPPORTED); /* int32 positions */
  }
}

int main(int argc, char** argv) {
  void* plugin;
  char x64[4096] = "";
  if (argc < 3 || (strcmp(argv[2], "available") == 0 && argc != 4)) {
    fprintf(stderr, "usage: %s PLUGIN unavailable | PLUGIN available DIR\n", argv[0]);
    return 2;
  }
  if (strcmp(argv[2], "available") == 0) {
    const char* dir = getenv("ROPECHECK_GGML_DIR") ? getenv("ROPECHECK_GGML_DIR") : argv[3];
    char base[4096];
    snprintf(base, sizeof base, "%s/libggml-base.so", dir);
    if (access(base, R_OK) != 0) {
      printf("skipped: no %s (scripts/peers installs the ggml libraries)\n", base);
      return 77;
    }
    setenv("ROPECHECK_GGML_DIR", dir, 1);
    snprintf(x64, sizeof x64, "%s/libggml-cpu-x64.so", dir);
  }
  plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (plugin == NULL) {
    fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
    return 1;
  }
  *(void**)&abi_version = dlsym(plugin, "ropecheck_kernel_abi_version");
  *(void**)&count = dlsym(plugin, "ropecheck_kernel_count");
  *(void**)&name = dlsym(plugin, "ropecheck_kernel_name");
  *(void**)&available = dlsym(plugin, "ropecheck_kernel_available");
  *(void**)&resolve = dlsym(plugin, "ropecheck_kernel_resolve");
  *(void**)&apply = dlsym(plugin, "ropecheck_kernel_apply");
  if (!abi_version || !count || !name || !available || !resolve || !apply) {
    fprintf(stderr, "missing entry point\n");
    return 1;
  }
  CHECK(abi_version() == ROPECHECK_KERNEL_ABI_VERSION);
  CHECK(count() >= 3);
  CHECK(strcmp(name(0), "ggml-best") == 0);
  CHECK(name(count()) == NULL && name(-1) == NULL);
  CHECK(available("no-such-variant") == ROPECHECK_ERROR_UNKNOWN_IMPLEMENTATION);
  CHECK(resolve("no-such-variant") == NULL);
  CHECK(apply("no-such-variant", NULL) == ROPECHECK_ERROR_UNKNOWN_IMPLEMENTATION);
  if (strcmp(argv[2], "unavailable") == 0) {
    check_unavailable();
  } else {
    check_available("ggml-best");
    /* build_ggml.sh's folders hold one variant each; ggml-x64 only in the no-FMA one */
    if (access(x64, R_OK) == 0) check_available("ggml-x64");
  }
  printf("%s: %d failed checks\n", argv[2], failures);
  return failures == 0 ? 0 : 1;
}
