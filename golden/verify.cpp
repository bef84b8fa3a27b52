// Verify: every expected value of a golden file recomputed with the exact reference at the file's
// precision and compared bit for bit (NaN equals NaN; the sign of zero counts). The reference, not
// the file, is the authority: a file that disagrees is wrong (or was made by another reference).
#include <cmath>

#include "golden/golden.h"
#include "golden/sidecar.h"
#include "golden/internal.h"
#include "reference/attention.h"
#include "reference/rope.h"
#include "reference/rounding.h"

namespace ropecheck::golden {
namespace {

bool same_value(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

class Checker {
 public:
  Checker(std::string_view file_name, int max_failures, VerifyResult& result)
      : file_(file_name), max_failures_(max_failures), result_(result) {}

  // Compares one field of one test; returns false on any difference.
  bool values(std::int64_t id, const std::string& field, const std::vector<double>& in_file,
              const std::vector<double>& computed) {
    result_.values_checked += static_cast<std::int64_t>(in_file.size());
    if (in_file.size() != computed.size()) {
      fail(id, field + ": expected " + std::to_string(computed.size()) + " values, the file has " +
                   std::to_string(in_file.size()));
      return false;
    }
    for (std::size_t i = 0; i < in_file.size(); ++i) {
      if (!same_value(in_file[i], computed[i])) {
        fail(id, field + "[" + std::to_string(i) + "]: the file has " + reference::to_hex(in_file[i]) +
                     ", the reference gives " + reference::to_hex(computed[i]));
        return false;
      }
    }
    return true;
  }

  bool strings(std::int64_t id, const std::string& field, const std::vector<std::string>& in_file,
               const std::vector<std::string>& computed) {
    result_.values_checked += static_cast<std::int64_t>(in_file.size());
    for (std::size_t i = 0; i < in_file.size() && i < computed.size(); ++i) {
      if (in_file[i] != computed[i]) {
        fail(id, field + "[" + std::to_string(i) + "]: the file has " + in_file[i] + ", the reference gives " + computed[i]);
        return false;
      }
    }
    return true;
  }

  void fail(std::int64_t id, const std::string& what) {
    if (static_cast<int>(result_.failures.size()) < max_failures_) {
      result_.failures.push_back(file_ + ": test " + std::to_string(id) + ": " + what);
    }
  }

 private:
  std::string file_;
  int max_failures_;
  VerifyResult& result_;
};

}  // namespace

VerifyResult verify(const GoldenFile& file, std::string_view file_name, int max_failures) {
  VerifyResult result;
  Checker check(file_name, max_failures, result);
  const int bits = file.generator.precision_bits;
  SidecarLoader sidecar(file);  // the sidecar's header read once for all its tests
  for (const Group& group : file.groups) {
    const Spec& spec = group.spec;
    for (const RopeTest& listed : group.rope_tests) {
      ++result.tests_checked;
      bool ok = true;
      RopeTest loaded;  // a sidecar test's arrays, one test at a time
      const RopeTest& t = listed.sidecar ? loaded : listed;
      if (listed.sidecar) {
        // An unreadable sidecar is bad input (GoldenError: exit 2), not a test the reference rejects.
        loaded = listed;
        sidecar.load(spec, loaded);
      }
      try {
        const reference::Shape shape{t.tokens, t.heads, t.head_dim};
        ok = check.values(t.id, "expected", t.expected,
                          reference::apply(spec, shape, t.positions, t.input, {bits, reference::Model::exact}));
        if (ok && t.expected_f32_recipe) {
          ok = check.values(t.id, "expected_f32_recipe", *t.expected_f32_recipe,
                            reference::apply(spec, shape, t.positions, t.input, {bits, reference::Model::f32_recipe}));
        }
        if (ok && t.exact) {
          const auto exact = reference::rotate_exact(spec, shape, t.positions, t.input, bits, reference::Form::elementwise);
          std::vector<std::string> text;
          for (const auto& v : exact) text.push_back(format_exact(v));
          ok = check.strings(t.id, "exact", *t.exact, text);
        }
      } catch (const std::exception& e) {
        check.fail(t.id, std::string("the reference rejects the test: ") + e.what());
        ok = false;
      }
      if (!ok) ++result.failing_tests;
    }
    for (const AttentionTest& t : group.attention_tests) {
      ++result.tests_checked;
      bool ok = true;
      try {
        const reference::AttentionRounded r =
            reference::attention(spec, t.q_tokens, t.k_tokens, t.heads, t.v_dim, t.q_positions, t.k_positions, t.q,
                                 t.k, t.v, t.causal, bits);
        ok = check.values(t.id, "expected_scores", t.expected_scores, r.scores) &&
             check.values(t.id, "expected_outputs", t.expected_outputs, r.outputs);
      } catch (const std::exception& e) {
        check.fail(t.id, std::string("the reference rejects the test: ") + e.what());
        ok = false;
      }
      if (!ok) ++result.failing_tests;
    }
  }
  return result;
}

}  // namespace ropecheck::golden
