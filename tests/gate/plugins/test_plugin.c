/* A small plugin for the gate's tests, in plain C against include/ropecheck/kernel.h: its own
 * unscaled RoPE in long double (x87 80-bit: θ_j and the angle p·θ_j within about 2^-63 relative,
 * so the angle error stays below 2^-31 rad for positions up to 2^31 and a float32 result is
 * within e ≈ 1 of the exact one), f32 and f64 only, everything else reported as unsupported.
 *
 * Compiled once per MISBEHAVE variant; variants 1–4 misbehave on a call whose first position is 7:
 *   0 correct, 1 segfault, 2 abort, 3 hang, 4 ABI version 2 (every call refused by the gate),
 *   5 write past the end of the output,
 *   6 "edited": correct, then edited where the first pair's input x is a marker value — the same
 *     edits tests/judge/one_rule_test.cpp makes for check, fuzz --replay and MatchesGolden:
 *     x = 1 (y = 0): the sign of the zero second output flipped; x = FLT_MAX or 1000: first output
 *     +Inf; x = 0.5: the first pass-through dim (rotary_dim) changed by +1;
 *   7 "fork": correct, but every call forks a process that lingers (pause() forever) and appends its
 *     pid to the file $ROPECHECK_TEST_PID_FILE: the gate must end it with the child's process group;
 *   8 "hang_always": every call hangs (the circuit breaker of runner/isolation.h);
 *   9 "far_write": on position 7, 64 bytes written 256 bytes past the end of the output (beyond
 *     64 guard bytes: only the protected pages of runner/abi_call.h catch it);
 *   10 "hog": on position 7, maps 64 GiB of address space (MAP_NORESERVE: no memory is used) and
 *     returns ROPECHECK_ERROR_INTERNAL when that is refused (--memory-limit), else computes;
 *   11 "bad_name": correct, but its resolved name is not UTF-8 ("tiny\xff");
 *   12 "offset": every token rotated at its position + 1 (an off-by-one a summary must name);
 *   13 "escape": correct, but every call starts two processes that leave its process group and
 *     session and linger (pause() forever): a setsid child, and a grandchild of a double fork whose
 *     middle process (setsid) exits; both pids appended to $ROPECHECK_TEST_PID_FILE;
 *   14 "stop_parent": correct, but on its first call sends SIGSTOP to its parent process (the gate's
 *     supervisor, runner/isolation.h) and appends the parent's pid to $ROPECHECK_TEST_PID_FILE. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ropecheck/kernel.h>

#ifndef MISBEHAVE
#define MISBEHAVE 0
#endif

uint32_t ropecheck_kernel_abi_version(void) { return MISBEHAVE == 4 ? 2u : ROPECHECK_KERNEL_ABI_VERSION; }
int32_t ropecheck_kernel_count(void) { return 1; }
const char* ropecheck_kernel_name(int32_t index) { return index == 0 ? "tiny" : NULL; }
int32_t ropecheck_kernel_available(const char* implementation) {
  (void)implementation;
  return 1;
}
const char* ropecheck_kernel_resolve(const char* implementation) {
  (void)implementation;
  return MISBEHAVE == 11 ? "tiny\xff" : "tiny";
}

static long double load(const void* base, int32_t dtype, int64_t i) {
  return dtype == ROPECHECK_DTYPE_F64 ? (long double)((const double*)base)[i] : (long double)((const float*)base)[i];
}

static void store(void* base, int32_t dtype, int64_t i, long double v) {
  if (dtype == ROPECHECK_DTYPE_F64) {
    ((double*)base)[i] = (double)v;
  } else {
    ((float*)base)[i] = (float)v;
  }
}

static void note_pid(pid_t pid) {
  const char* pid_file = getenv("ROPECHECK_TEST_PID_FILE");
  FILE* f = pid_file && pid > 0 ? fopen(pid_file, "a") : NULL;
  if (f) {
    fprintf(f, "%d\n", (int)pid);
    fclose(f);
  }
}

/* Variant 13: a setsid child and a double-forked grandchild, both lingering outside the group. */
static void start_escapees(void) {
  const pid_t child = fork();
  if (child == 0) {
    setsid();
    for (;;) pause();
  }
  note_pid(child);
  int to_parent[2];
  if (pipe(to_parent) != 0) return;
  const pid_t middle = fork();
  if (middle == 0) {
    setsid();
    const pid_t grandchild = fork();
    if (grandchild == 0) {
      for (;;) pause();
    }
    (void)!write(to_parent[1], &grandchild, sizeof grandchild);
    _exit(0);
  }
  close(to_parent[1]);
  pid_t grandchild = 0;
  if (middle > 0 && read(to_parent[0], &grandchild, sizeof grandchild) == (ssize_t)sizeof grandchild) note_pid(grandchild);
  close(to_parent[0]);
  if (middle > 0) waitpid(middle, NULL, 0);
}

int32_t ropecheck_kernel_apply(const char* implementation, const ropecheck_call* call) {
  (void)implementation;
  if (!call || !call->spec) return ROPECHECK_ERROR_INVALID_ARGUMENT;
  const ropecheck_spec* s = call->spec;
  if (s->scaling != ROPECHECK_SCALING_NONE || s->axes != ROPECHECK_AXES_NONE || call->cos_cache || call->device_pointers ||
      (s->dtype != ROPECHECK_DTYPE_F32 && s->dtype != ROPECHECK_DTYPE_F64) || call->k.heads != 0) {
    return ROPECHECK_ERROR_UNSUPPORTED;
  }
  if (MISBEHAVE == 7) {
    const pid_t lingering = fork();
    if (lingering == 0) {
      for (;;) pause();
    }
    const char* pid_file = getenv("ROPECHECK_TEST_PID_FILE");
    FILE* f = pid_file && lingering > 0 ? fopen(pid_file, "a") : NULL;
    if (f) {
      fprintf(f, "%d\n", (int)lingering);
      fclose(f);
    }
  }
  if (MISBEHAVE == 13) start_escapees();
  static int calls = 0;
  if (MISBEHAVE == 14 && calls++ == 0) {
    note_pid(getppid());
    kill(getppid(), SIGSTOP);
  }
  if (MISBEHAVE == 8) {
    for (;;) pause();
  }
  if (MISBEHAVE == 10 && call->tokens > 0 && call->positions[0] == 7) {
    const size_t size = (size_t)64 << 30;
    void* p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return ROPECHECK_ERROR_INTERNAL;
    munmap(p, size);
  }
  if (call->tokens > 0 && call->positions[0] == 7) {
    if (MISBEHAVE == 1) {
      volatile int* nowhere = NULL;
      *nowhere = 1;
    } else if (MISBEHAVE == 2) {
      abort();
    } else if (MISBEHAVE == 3) {
      for (;;) pause();
    }
  }
  const int pairs = s->rotary_dim / 2;
  const ropecheck_tensor* q = &call->q;
  for (int64_t t = 0; t < call->tokens; ++t) {
    const long double position = (long double)call->positions[t] + (MISBEHAVE == 12 ? 1 : 0);
    for (int64_t h = 0; h < q->heads; ++h) {
      const int64_t in = t * q->input_token_stride + h * q->input_head_stride;
      const int64_t out = t * q->output_token_stride + h * q->output_head_stride;
      for (int j = 0; j < pairs; ++j) {
        /* θ_j = base^(−2j/d) (docs/rope.md §2). */
        const long double theta = powl((long double)s->base, -2.0L * j / s->rotary_dim);
        long double angle = position * theta;
        if (s->direction == ROPECHECK_DIRECTION_INVERSE) angle = -angle;
        const long double c = cosl(angle), sn = sinl(angle);
        const int64_t a = s->layout == ROPECHECK_LAYOUT_INTERLEAVED ? 2 * j : j;
        const int64_t b = s->layout == ROPECHECK_LAYOUT_INTERLEAVED ? 2 * j + 1 : j + pairs;
        const long double x = load(q->input, s->dtype, in + a), y = load(q->input, s->dtype, in + b);
        store(q->output, s->dtype, out + a, x * c - y * sn);
        store(q->output, s->dtype, out + b, x * sn + y * c);
      }
      for (int i = s->rotary_dim; i < s->head_dim; ++i) {
        const size_t size = ropecheck_dtype_size(s->dtype);
        memcpy((char*)q->output + (out + i) * size, (const char*)q->input + (in + i) * size, size);
      }
    }
  }
  if (MISBEHAVE == 6) {
    for (int64_t t = 0; t < call->tokens; ++t) {
      for (int64_t h = 0; h < q->heads; ++h) {
        const int64_t in = t * q->input_token_stride + h * q->input_head_stride;
        const int64_t out = t * q->output_token_stride + h * q->output_head_stride;
        const int64_t second = s->layout == ROPECHECK_LAYOUT_INTERLEAVED ? 1 : pairs;
        const long double x = load(q->input, s->dtype, in), y = load(q->input, s->dtype, in + second);
        if (x == 1 && y == 0) store(q->output, s->dtype, out + second, -load(q->output, s->dtype, out + second));
        if (x == (long double)FLT_MAX || x == 1000) store(q->output, s->dtype, out, INFINITY);
        if (x == 0.5L && s->rotary_dim < s->head_dim) {
          store(q->output, s->dtype, out + s->rotary_dim, load(q->output, s->dtype, out + s->rotary_dim) + 1);
        }
      }
    }
  }
  if (MISBEHAVE == 9 && call->tokens > 0 && call->positions[0] == 7) {
    const int64_t end = (call->tokens - 1) * q->output_token_stride + (q->heads - 1) * q->output_head_stride + s->head_dim;
    memset((char*)q->output + end * (int64_t)ropecheck_dtype_size(s->dtype) + 256, 0x5a, 64);
  }
  if (MISBEHAVE == 5 && call->tokens > 0 && call->positions[0] == 7) {
    const int64_t end = (call->tokens - 1) * q->output_token_stride + (q->heads - 1) * q->output_head_stride + s->head_dim;
    store(q->output, s->dtype, end, 1.0L);
  }
  return ROPECHECK_OK;
}
