// The one grammar of `--positions` (apply, check --spec, golden generate): a list, a range, or a file.
//   "3,5,8"            one position per token; multi-axis tuples as m1:m2 ("3:5,4:5")
//   "0:131072"         the range [0, 131072), one token each (one-component specs: a single token
//   "0:131072:8"       of a multi-axis spec is written m1:m2, so ranges are for 1-D RoPE only)
//   FILE.npy / FILE.json  integers in a shape components_axis accepts: any shape for one
//                      component (row-major: [tokens], [tokens, 1], [batch, tokens]), else
//                      [tokens, components] or [components, tokens] (an existing file wins over
//                      the list reading of the same text)
// At most kMaxPositions tokens: a range's length is checked before anything is allocated.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ropecheck::gate {

inline constexpr std::int64_t kMaxPositions = std::int64_t{1} << 28;

// Row-major [tokens, components]. Throws UsageError (a list or range that is not one) or InputError
// (a file that is not one), one line naming the option or the file.
std::vector<std::int64_t> parse_positions_option(const std::string& text, int components, const std::string& option = "--positions");

// How many tokens `text` gives where that is known before any value is read: a range's length, a
// .npy file's header; none for a list (read already) or a JSON file. Throws what
// parse_positions_option throws for a range or header it refuses. A command checks its counts
// with it first: a 1 GiB positions file beside a 2-value input is refused from its header.
std::optional<std::int64_t> positions_option_tokens(const std::string& text, int components, const std::string& option = "--positions");

// Where a token's position components lie in an integer array of `shape`: the one rule of position
// arrays, for the CLI's position files and Python's arrays (python/ropecheck/_tensors.py) alike.
//   components 1: any shape, every value one token's position, row-major ([tokens], [tokens, 1],
//                 [batch, tokens]): none.
//   components c > 1: [..., c]: last; else [c, ...] (Qwen2-VL's position_ids [3, batch, seq]):
//                 first. [c, c] reads as [tokens, components].
// Throws InputError "`what`: shape: expected ..., got [...]" for any other shape.
enum class ComponentsAxis { none, last, first };
ComponentsAxis components_axis(const std::vector<std::int64_t>& shape, int components, const std::string& what);

// When an input tensor of `shape` reads as HF transformers' [batch, heads, tokens, head_dim] (or
// [heads, tokens, head_dim]) for the `tokens` tokens the positions give (per sequence, or over the
// batch): its dim -2 holds them and its leading dims do not. The one-line message naming `what`,
// the shape got, the shapes expected and the transpose; empty when the shape does not read so.
// The CLI refuses such an input file (exit 2) and Python such an array (ValueError).
std::string heads_before_tokens(const std::vector<std::int64_t>& shape, std::int64_t tokens, std::int64_t head_dim,
                                const std::string& what);

// Whether `text` names something to read rather than a literal (an existing path, or one that cannot
// be looked up for a reason a literal never gives).
bool names_a_file(const std::string& text);

}  // namespace ropecheck::gate
