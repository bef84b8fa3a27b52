// The implementation under test — one interface for everything that is judged (docs/design.md): a
// project kernel in process, a kernel or plugin in a child process, the reference under each
// rounding model, a candidate file, a function (the GoogleTest matcher, Python). Every command
// (check, run, sweep, props, fuzz) and the identity catalog (proofs/) see implementations only
// through it; runner/registry.h makes them from `--impl` / `--plugin` / `--candidate`.
//
// It also answers what the implementation is held to, in one place: tolerance(spec) — an explicit
// `--tolerance`, else the implementation's own proven bound (the project's kernels:
// optimized/error_bounds.h; the correctly rounded reference: e ≤ 1), else the model's default for a
// careful implementation (judge/tolerance.h) — and claim(spec), the same bound in the form the
// identity catalog propagates (ErrorClaim), or a finer one the implementation derives itself.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "golden/golden.h"
#include "judge/group.h"
#include "judge/settings.h"
#include "judge/tolerance.h"
#include "reference/multiprecision.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "spec/spec.h"

namespace ropecheck::runner {

using reference::Real;
using reference::Shape;

// The result of one call. `ok`: `output` holds tokens·heads·head_dim values of the spec's dtype as
// doubles, row-major. Every other status carries a one-line `message` and no output.
struct ApplyResult {
  enum class Status {
    ok,
    unsupported,   // the implementation declines the spec (ROPECHECK_ERROR_UNSUPPORTED): skipped, not failed
    kernel_error,  // an error status from the kernel
    crash,         // the child process died (signal or exit)
    timeout,       // no answer within the time limit (the child was killed)
    abi,           // the plugin speaks another ABI version
    load,          // the plugin could not be loaded
    guard,         // it wrote outside its output buffer
    missing,       // a candidate file has no output for this call
    shape,         // a candidate file's output has the wrong size or is not numbers
    unavailable,   // the implementation does not run on this machine (ropecheck_kernel_available)
  };
  Status status = Status::ok;
  std::string message;
  std::vector<double> output;
};
// The case a call of that status lists against its test (judge/group.h CaseKind: kernel_error is
// `status`); ok and unsupported fail no test.
judge::CaseKind case_kind(ApplyResult::Status status);
// "ok", "unsupported", or the name of its case kind: what notes and errors print.
std::string_view kind_name(ApplyResult::Status status);

// What an implementation promises about each rotated pair of its output, in the form the identity
// catalog propagates by ball arithmetic (proofs/ball.h). For an input pair (x, y) with ρ = √(x² + y²),
// whose exact result is (A, B) = g·R(φ)·(x, y) (g the attention factor, φ = m·θ'_j signed for the
// inverse direction), each output component obeys
//     |a − A| ≤ ρ · (relative + per_angle·|φ| + per_position·|m|) + absolute.
struct ErrorClaim {
  double relative = 0;
  double per_angle = 0;
  double per_position = 0;
  double absolute = 0;

  // A tolerance in e units (per_radian included) as a claim: e·u·max(1,|g|) relative, plus one
  // subnormal quantum 2^(emin−p+1) absolute (half of it, 2^(emin−p), is not a double for f64; the
  // full quantum bounds a subnormal rounding error too).
  static ErrorClaim from_tolerance(const judge::Tolerance& tolerance, const Spec& spec);
};

// What an implementation is held to (judge/settings.h): every adapter keeps its Claims, so that
// tolerance() and claim() answer in one place.
using judge::Claims;

// A candidate's answer for one golden attention test (judge/attention.cpp): scores
// [heads, q_tokens, k_tokens] and outputs [q_tokens, heads, v_dim], each null when not given.
struct AttentionAnswer {
  const std::vector<double>* scores = nullptr;
  const std::vector<double>* outputs = nullptr;
};

// A call that did not produce outputs, thrown by apply() (the identity catalog records it as that
// case's failure).
class ImplementationFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Implementation {
 public:
  explicit Implementation(Claims claims = {}) : claims_(std::move(claims)) {}
  virtual ~Implementation() = default;
  Implementation(const Implementation&) = delete;
  Implementation& operator=(const Implementation&) = delete;

  // Shown in reports ("avx2", "plugin ./lib.so: example_c", "candidate file out.npz").
  virtual std::string name() const = 0;
  // The command-line words that select it again, for replay commands ("--impl avx2").
  virtual std::string selector() const = 0;

  // Applies `spec` to row-major [tokens, heads, head_dim] inputs (values of spec.dtype: NaN, ±Inf,
  // ±0 and subnormals included) at `positions` (position_components(spec) per token). A failure of
  // the implementation is a status, never an exception.
  virtual ApplyResult run(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                          std::span<const double> input) const = 0;
  // run() for callers that want outputs or an exception (the identity catalog): throws
  // ImplementationFailure with the status and message.
  std::vector<double> apply(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                            std::span<const double> input) const;

  // False for a spec the implementation declines: asked once per spec with a one-token call and
  // remembered (thread-safe).
  virtual bool supports(const Spec& spec) const;
  // Largest |position| it accepts (docs/design.md: positions up to 2^31 at least).
  virtual std::int64_t max_position() const { return std::int64_t{1} << 31; }
  // Whether negative positions are meaningful (R_{−m} = R_mᵀ); the reference accepts them.
  virtual bool supports_negative_positions() const { return false; }
  // Unrounded outputs, for implementations that have them (the reference at P bits): the catalog
  // then judges these and reports agreement in bits.
  virtual std::optional<std::vector<Real>> apply_exact(const Spec& /*spec*/, Shape /*shape*/,
                                                       std::span<const std::int64_t> /*positions*/,
                                                       std::span<const double> /*input*/) const {
    return std::nullopt;
  }
  virtual int exact_precision_bits() const { return 0; }
  // Why no further call is made (a child process's circuit breaker after consecutive timeouts,
  // runner/isolation.h), or nothing: a search stops there instead of collecting instant failures.
  virtual std::optional<std::string> stopped_reason() const { return std::nullopt; }
  // A candidate file's attention tensors for a golden attention test; nullopt when this
  // implementation computes RoPE only (kernels, plugins: the ABI applies RoPE).
  virtual std::optional<AttentionAnswer> attention(const std::string& /*suite*/, const golden::AttentionTest& /*test*/) const {
    return std::nullopt;
  }

  // The bound outputs of `spec` are judged by (see the top of this file).
  judge::Tolerance tolerance(const Spec& spec) const;
  // The same as a claim for the identity catalog; an implementation's own finer claim (the
  // reference's exact forms, the float32 recipe's growth with the angle) unless --tolerance is given.
  ErrorClaim claim(const Spec& spec) const;
  const Claims& claims() const { return claims_; }

 protected:
  // A bound the implementation has proven for `spec` under `model` (none: the model's default).
  virtual std::optional<judge::Tolerance> proven_bound(const Spec& /*spec*/, judge::Model /*model*/) const { return std::nullopt; }
  virtual std::optional<ErrorClaim> own_claim(const Spec& /*spec*/) const { return std::nullopt; }

 private:
  Claims claims_;
  mutable std::mutex supported_mutex_;
  mutable std::map<std::string, bool> supported_;
};

}  // namespace ropecheck::runner
