// Internal to judge/inference*.cpp: the types that infer_spec's parts share (the variant
// catalogue, judge/variant_catalogue.cpp; the fits, judge/angle_fits.cpp; the memory faults and
// where rows took their input from, judge/memory_faults.cpp). Not for use outside judge/.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "judge/inference.h"
#include "spec/spec.h"

namespace ropecheck::judge::inference_detail {

inline constexpr long double kPi = 3.141592653589793238462643383279502884L;
inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

inline std::string format(const char* fmt, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, fmt, v);
  return buffer;
}
inline std::string percent(double share) {
  // 99.6 % is not "100%": a share is floored to a whole percent, except exactly 1.
  return share >= 1 ? "100%" : format("%.0f", std::floor(100 * share)) + "%";
}
// A decimal that the spec parser reads back: integers as integers, others with 6 significant digits.
inline std::string decimal(long double v) {
  if (std::fabs(v) < 1e15L && v == std::round(v)) return format("%.0f", static_cast<double>(v));
  return format("%.6g", static_cast<double>(v));
}

// ---- what a candidate may compute instead ------------------------------------------------------

// Where output row (token t, head h) of a test took its input from: its own row, or another one
// by a head table or by a linear read index (a kernel that walks memory with the wrong strides or
// from the wrong offset reads index a·t + b·h + c, in head rows, of the data's own layout). Tokens
// are the user's token indices (a sample's token t is DiagnosedTest::user_token(t)).
struct RowSource {
  enum class Kind { own, head_table, token_major, head_major };
  Kind kind = Kind::own;
  std::vector<std::int64_t> head;           // head_table: head h holds head head[h]'s input
  std::int64_t a = 0, b = 1, c = 0, s = 1;  // the read index; s: head rows per token (token_major), tokens (head_major)
  bool source_position = false;             // rotated at the source token's position, not its own
  // The source row (st, sh) of output row (t, h) of a test of `heads` heads; false when it lies
  // outside the input given.
  bool find(std::int64_t t, std::int64_t h, std::int64_t heads, std::int64_t& st, std::int64_t& sh) const {
    st = t, sh = h;
    if (kind == Kind::own) return true;
    if (kind == Kind::head_table) {
      if (h < static_cast<std::int64_t>(head.size())) sh = head[static_cast<std::size_t>(h)];
      return sh >= 0 && sh < heads;
    }
    const std::int64_t index = a * t + b * h + c;
    if (index < 0) return false;
    if (kind == Kind::token_major) {
      st = index / s, sh = index % s;
    } else {
      sh = index / s, st = index % s;
    }
    return sh < heads;
  }
};

struct Variant {
  std::string kind;             // the explanation's kind
  std::string change;           // what differs from the spec, in its words ("base=10000 (expected 1000000)")
  Spec spec;                    // what it computes: layout, rotary_dim, base, scaling, axes, direction
  int frequency_dim = 0;        // > 0: θ_j laid over this many dims instead of rotary_dim
  bool head_dim_pairs = false;  // half layout: pairs (i, i + head_dim/2) of a partial rotary
  std::int64_t position_shift = 0;
  bool per_position_seq = false;  // dynamic / longrope: seq_len = position + 1, token by token
  bool first_axis_only = false;   // multi-axis: component 0 drives every pair
  std::optional<Dtype> positions_dtype, theta_dtype, angle_dtype, cos_sin_dtype;
  bool angle_tf32 = false;
  bool running_product = false;          // θ_j = θ_{j−1}·r in binary32, r = RN32(b^(−2/d)) (ggml's rope)
  std::optional<long double> attention;  // the attention factor in place of the spec's
  RowSource source;                      // where each output row took its input from
  std::vector<std::int64_t> head_shift;  // per head: a position shift added to position_shift
  bool memory = false;                   // a memory fault: "your outputs have ...", not "RoPE with ..."
  bool negated = false;                  // every output value's sign flipped (a rotation by pi more)
};

// The sample the variants are scored on: rows (token × head) with their positions.
struct Row {
  const Call* test;
  std::span<const double> output;
  std::int64_t t, h;
  const DiagnosedTest* sample = nullptr;  // where the test's tokens lie in the user's tensor
};

// The sample's index of user token u, or -1 when the sample does not hold it.
inline std::int64_t sample_token(const DiagnosedTest& dt, std::int64_t u) {
  if (!dt.token_index.empty()) {
    const auto it = std::lower_bound(dt.token_index.begin(), dt.token_index.end(), u);
    return it != dt.token_index.end() && *it == u ? it - dt.token_index.begin() : -1;
  }
  const std::int64_t d = u - dt.first_token;
  if (d < 0 || d % dt.token_stride != 0 || d / dt.token_stride >= dt.test->tokens) return -1;
  return d / dt.token_stride;
}

struct Score {
  double within = 0, identical = 0;
  std::int64_t units = 0;
  // Rows scored; rows not scored: their source lies outside the input given, or is a token the
  // sample does not hold.
  std::int64_t rows = 0, outside = 0, unsampled = 0;
};

// A row (token × head) of a test, as the memory checks flag it.
using RowKey = std::tuple<const Call*, std::int64_t, std::int64_t>;

struct Fits {
  std::vector<std::optional<long double>> theta_hat;  // per pair index
  std::optional<long double> base, factor, base_median;
  std::optional<long double> offset;
  long double gain = 1;  // median output/input norm ratio over the spec's attention factor
};

struct MemoryFinding {
  std::string kind, what;
  std::vector<std::int64_t> tokens;  // user token indices, sorted, unique
  std::set<RowKey> rows_flagged;
  std::int64_t rows = 0, faulty_rows = 0;
  std::int64_t matched = 0;  // memory_stride: rows whose norms are another row's input's
  std::int64_t stride = 1;   // the largest token stride of the tests read
  // memory_stride: the rows matched to another row of their own test, (t, h) <- (st, sh), tokens
  // as the user's indices.
  struct Match {
    std::size_t test;
    std::int64_t t, h, st, sh;
  };
  std::vector<Match> sources;
  std::vector<Match> unmatched;  // rows whose norms match no input row (st = sh = -1)
};

// Round to `digits` significant decimal digits.
long double significant(long double v, int digits);
// Whether `s` passes validate.
bool valid(const Spec& s);

// The catalogue of single changes of `spec` worth scoring, in the order they are tried, with the
// values fitted from the outputs (judge/variant_catalogue.cpp).
std::vector<Variant> variants(const Spec& spec, const Fits& fits);

// The fits from the candidate's own angles (judge/angle_fits.cpp): the per-pair θ̂ alone where
// `failing` is false (a passing or marginal group's diagnosis reports them and names no change of
// the spec); the gain, the schedule and the offset too where it is true.
Fits fit(const Spec& spec, const std::vector<Row>& rows, bool failing, int threads);

// Rows (token × head) of the tests whose outputs are zeros, their inputs, or not a rotation of
// their input: one finding per kind (judge/memory_faults.cpp).
std::map<std::string, MemoryFinding> memory_faults(const Spec& spec, const std::vector<DiagnosedTest>& tests, int threads);
// "4096..8190, 9000": runs of tokens no further apart than the sample's stride.
std::string token_ranges_text(const std::vector<std::int64_t>& tokens, std::int64_t stride);
// "+3", "-1".
std::string signed_text(std::int64_t v);
// The layouts that the rows holding another row's input follow (judge/memory_faults.cpp).
std::vector<Variant> source_variants(const Spec& spec, const std::map<std::string, MemoryFinding>& memory,
                                     const std::vector<DiagnosedTest>& tests);

}  // namespace ropecheck::judge::inference_detail
