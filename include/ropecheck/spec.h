// ropecheck's public C++ API (include/README.md): a RoPE variant, parsed and validated by the
// library's own parser (the grammar: spec/README.md), and the shape of the tensors it rotates.
// Standard headers only; implemented in the library target ropecheck::ropecheck (spec/public_spec.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace ropecheck {

namespace detail {
struct SpecAccess;  // the library's own way in and out (spec/public_spec.h); not for users
}

// One complete RoPE variant (docs/design.md "Core vocabulary"). A small immutable handle: cheap to
// copy, compared by value. What an implementation needs to compute the rotation is in the accessors;
// every other parameter (the scaling's, the axes') is in text() and json(), exactly.
class RopeSpec {
 public:
  enum class Layout { interleaved, half };  // pairs (2j, 2j+1) or (j, j + rotary_dim/2)
  enum class Direction { forward, inverse };
  enum class Dtype { f64, f32, f16, bf16 };

  // The compact form "key=value,..." ("layout=half,head_dim=128,base=500000,dtype=bf16").
  // Throws std::invalid_argument whose message names the field and what was expected.
  static RopeSpec parse(std::string_view text);
  // The JSON form (a golden group's "spec" object). Throws std::invalid_argument.
  static RopeSpec parse_json(std::string_view json);

  std::string text() const;  // the canonical compact form (`ropecheck spec --spec` prints it)
  std::string json() const;  // the canonical JSON form
  Layout layout() const;
  int head_dim() const;
  int rotary_dim() const;          // even, <= head_dim; dims [rotary_dim, head_dim) pass through
  std::string base() const;        // the exact decimal ("10000", "500000")
  std::string_view scaling() const;  // "none", "linear", "ntk", "dynamic", "yarn", "yarn-ggml", "llama3", "longrope"
  Direction direction() const;     // inverse rotates by −angle
  Dtype dtype() const;             // the outputs' dtype
  Dtype input_dtype() const;       // the inputs' dtype (dtype() unless the spec says input_dtype=)
  int position_components() const; // position values per token: 1, or more for multi-axis specs

  friend bool operator==(const RopeSpec& a, const RopeSpec& b);

 private:
  struct Data;  // the library's spec (spec/spec.h)
  explicit RopeSpec(std::shared_ptr<const Data> data) : data_(std::move(data)) {}
  std::shared_ptr<const Data> data_;
  friend struct detail::SpecAccess;
};

// A tensor [tokens, heads, head_dim], row-major and contiguous: element (t, h, i) is at
// (t·heads + h)·head_dim + i.
struct TensorShape {
  std::int64_t tokens = 1;
  std::int64_t heads = 1;
  std::int64_t head_dim = 0;
  std::int64_t elements() const { return tokens * heads * head_dim; }
};

}  // namespace ropecheck
