// The one grammar of `--positions` (apply, check --spec, golden generate): a list, a range, or a file.
//   "3,5,8"            one position per token; multi-axis tuples as m1:m2 ("3:5,4:5")
//   "0:131072"         the range [0, 131072), one token each (one-component specs: a single token
//   "0:131072:8"       of a multi-axis spec is written m1:m2, so ranges are for 1-D RoPE only)
//   FILE.npy / FILE.json  integers, [tokens] or [tokens, components] (an existing file wins over
//                      the list reading of the same text)
// At most kMaxPositions tokens: a range's length is checked before anything is allocated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ropecheck::gate {

inline constexpr std::int64_t kMaxPositions = std::int64_t{1} << 28;

// Row-major [tokens, components]. Throws UsageError (a list or range that is not one) or InputError
// (a file that is not one), one line naming the option or the file.
std::vector<std::int64_t> parse_positions_option(const std::string& text, int components,
                                                 const std::string& option = "--positions");

// Whether `text` names something to read rather than a literal (an existing path, or one that cannot
// be looked up for a reason a literal never gives).
bool names_a_file(const std::string& text);

}  // namespace ropecheck::gate
