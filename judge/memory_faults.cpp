// Memory faults in the outputs, and where rows took their input from.
#include "judge/inference_detail.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "base/parallel.h"
#include "judge/pair_math.h"
#include "judge/pair_rule.h"
#include "judge/tolerance.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "spec/schedule.h"

namespace ropecheck::judge::inference_detail {

// ---- memory faults -------------------------------------------------------------------------------

// "4096..8190, 9000": runs of tokens no further apart than the sample's stride.
std::string token_ranges_text(const std::vector<std::int64_t>& tokens, std::int64_t stride) {
  std::string out;
  int ranges = 0;
  for (std::size_t i = 0; i < tokens.size();) {
    std::size_t k = i;
    while (k + 1 < tokens.size() && tokens[k + 1] - tokens[k] <= stride) ++k;
    if (ranges == 4) {
      out += ", ...";
      break;
    }
    if (!out.empty()) out += ", ";
    out += std::to_string(tokens[i]) + (k > i ? ".." + std::to_string(tokens[k]) : "");
    ++ranges;
    i = k + 1;
  }
  return out;
}

// The findings of every token range, joined: counts summed, rows and tokens as sets (the same
// findings on any number of threads).
std::map<std::string, MemoryFinding> join_findings(std::vector<std::map<std::string, MemoryFinding>>& parts) {
  std::map<std::string, MemoryFinding> found;
  for (std::map<std::string, MemoryFinding>& part : parts) {
    for (auto& [kind, p] : part) {
      MemoryFinding& f = found[kind];
      f.kind = kind;
      f.faulty_rows += p.faulty_rows;
      f.matched += p.matched;
      f.sources.insert(f.sources.end(), p.sources.begin(), p.sources.end());
      f.unmatched.insert(f.unmatched.end(), p.unmatched.begin(), p.unmatched.end());
      f.rows_flagged.merge(p.rows_flagged);
      f.tokens.insert(f.tokens.end(), p.tokens.begin(), p.tokens.end());
    }
  }
  return found;
}

// Each finding's figures over every row read (`rows` of them) and its words.
void complete_findings(std::map<std::string, MemoryFinding>& found, std::int64_t rows, const std::vector<DiagnosedTest>& tests) {
  for (auto& [kind, f] : found) {
    f.rows = rows;
    std::sort(f.tokens.begin(), f.tokens.end());
    f.tokens.erase(std::unique(f.tokens.begin(), f.tokens.end()), f.tokens.end());
    for (const DiagnosedTest& dt : tests) {
      f.stride = std::max(f.stride, dt.token_stride);
      for (std::size_t k = 1; k < dt.token_index.size(); ++k) f.stride = std::max(f.stride, dt.token_index[k] - dt.token_index[k - 1]);
    }
    f.what = kind == "memory_zeros"      ? "rows never written (zeros)"
             : kind == "memory_identity" ? "no rotation applied (outputs equal the inputs)"
             : f.matched > 0             ? "another token's data (pair norms that are not the row's input's: a stride ignored)"
                             // no row's norms are another row's input's: nothing says where they came from
                             : "rows that are not a rotation of their input (pair norms not kept, unevenly; none is another row's input)";
  }
}

// Rows (token × head) of the tests whose outputs are zeros, their inputs, or not a rotation of
// their input (pair norms not kept, unevenly: a uniform ratio is a magnitude, not memory): one
// finding per kind.
std::map<std::string, MemoryFinding> memory_faults(const Spec& spec, const std::vector<DiagnosedTest>& tests, int threads) {
  const int pairs = spec.rotary_dim / 2;
  const int components = position_components(spec);
  struct RowRef {
    std::size_t test;
    std::int64_t t, h;
  };
  std::vector<reference::PairDims> dims(static_cast<std::size_t>(pairs));
  for (int j = 0; j < pairs; ++j) dims[static_cast<std::size_t>(j)] = reference::pair_dims(spec, j);
  auto norms = [&](const double* v, std::vector<double>& out) {
    out.resize(static_cast<std::size_t>(pairs));
    for (int j = 0; j < pairs; ++j) {
      out[static_cast<std::size_t>(j)] =
          static_cast<double>(pair_norm(v[dims[static_cast<std::size_t>(j)].first], v[dims[static_cast<std::size_t>(j)].second]));
    }
  };
  // Input pair norms of every row, for the "another row's data" lookup (sorted by the first norm).
  std::vector<std::pair<double, RowRef>> by_norm;
  std::int64_t rows = 0;
  for (std::size_t i = 0; i < tests.size(); ++i) {
    const Call& test = *tests[i].test;
    for (std::int64_t t = 0; t < test.tokens; ++t) {
      for (std::int64_t h = 0; h < test.heads; ++h) {
        const double* x = test.input.data() + (t * test.heads + h) * spec.head_dim;
        by_norm.push_back({static_cast<double>(pair_norm(x[dims[0].first], x[dims[0].second])), {i, t, h}});
        ++rows;
      }
    }
  }
  std::sort(by_norm.begin(), by_norm.end(), [](const auto& l, const auto& r) { return l.first < r.first; });
  const double slack = std::ldexp(1.0, 4 - significand_bits(spec.dtype)) + 1e-6;  // a few roundings of the dtype
  // Below this pair norm a rotated component may be subnormal (2^(emin + p): the normal range
  // reaches down to a relative 2^-p of the norm).
  const double no_underflow = std::ldexp(1.0, reference::format_of(spec.dtype).emin + significand_bits(spec.dtype));
  auto close = [&](const std::vector<double>& l, const std::vector<double>& r) {
    for (std::size_t j = 0; j < l.size(); ++j) {
      if (std::fabs(l[j] - r[j]) > slack * std::max(std::fabs(l[j]), std::fabs(r[j])) + 1e-30) return false;
    }
    return true;
  };
  // The tokens of every test in contiguous ranges on every thread, each range with its own
  // findings, joined after: counts summed, rows and tokens as sets (the same findings on any number
  // of threads).
  struct TokenRef {
    std::size_t test;
    std::int64_t t;
  };
  std::vector<TokenRef> token_refs;
  for (std::size_t i = 0; i < tests.size(); ++i) {
    for (std::int64_t t = 0; t < tests[i].test->tokens; ++t) token_refs.push_back({i, t});
  }
  std::vector<std::map<std::string, MemoryFinding>> parts =
      map_token_ranges(static_cast<std::int64_t>(token_refs.size()), threads, [&](TokenRange range) {
        std::map<std::string, MemoryFinding> found;
        std::vector<double> in_norms, out_norms, other_norms;
        for (std::int64_t r = range.begin; r < range.end; ++r) {
          const std::size_t i = token_refs[static_cast<std::size_t>(r)].test;
          const std::int64_t t = token_refs[static_cast<std::size_t>(r)].t;
          const Call& test = *tests[i].test;
          const std::span<const double> output = tests[i].output;
          // Whether the token's angles are all zero (position 0: a rotation by nothing is the input).
          bool moving = false;
          for (int j = 0; j < pairs && !moving; ++j) {
            moving = test.positions[static_cast<std::size_t>(t * components + position_component(spec, j))] != 0;
          }
          for (std::int64_t h = 0; h < test.heads; ++h) {
            const std::size_t row = static_cast<std::size_t>((t * test.heads + h) * spec.head_dim);
            const double* x = test.input.data() + row;
            const double* o = output.data() + row;
            bool zero_out = true, zero_in = true, same = true, finite = true;
            for (int k = 0; k < spec.head_dim; ++k) {
              zero_out &= o[k] == 0;
              zero_in &= x[k] == 0;
              same &= o[k] == x[k];
              finite &= std::isfinite(x[k]) && std::isfinite(o[k]);
            }
            if (!finite || zero_in) continue;
            std::string kind;
            bool matched = false;
            std::optional<MemoryFinding::Match> source;
            if (zero_out) {
              kind = "memory_zeros";
            } else if (same && moving) {
              kind = "memory_identity";
            } else if (!same) {
              norms(x, in_norms);
              norms(o, out_norms);
              double lo = kInfinity, hi = 0;
              for (int j = 0; j < pairs; ++j) {
                // Pairs whose rotated components cannot underflow only: a subnormal value flushed to
                // zero is an edge case, not memory.
                const reference::PairDims pd = dims[static_cast<std::size_t>(j)];
                if (!(in_norms[static_cast<std::size_t>(j)] > no_underflow) ||
                    domain_of(x[pd.first], x[pd.second], spec.dtype, static_cast<double>(attention_factor<long double>(spec))) !=
                        Domain::ordinary) {
                  continue;
                }
                const double ratio = out_norms[static_cast<std::size_t>(j)] / in_norms[static_cast<std::size_t>(j)];
                lo = std::min(lo, ratio), hi = std::max(hi, ratio);
              }
              if (hi > lo * (1 + 64 * slack) + 1e-30) {  // norms not kept, and not by one factor
                kind = "memory_stride";
                const double n0 = out_norms[0];
                auto it = std::lower_bound(by_norm.begin(), by_norm.end(), n0 * (1 - slack) - 1e-30,
                                           [](const auto& e, double v) { return e.first < v; });
                for (; it != by_norm.end() && it->first <= n0 * (1 + slack) + 1e-30; ++it) {
                  const Call& other = *tests[it->second.test].test;
                  norms(other.input.data() + (it->second.t * other.heads + it->second.h) * spec.head_dim, other_norms);
                  if (close(other_norms, out_norms)) {
                    matched = true;
                    if (it->second.test == i)
                      source = MemoryFinding::Match{i, tests[i].user_token(t), h, tests[i].user_token(it->second.t), it->second.h};
                    break;
                  }
                }
              }
            }
            if (kind.empty()) continue;
            MemoryFinding& f = found[kind];
            f.kind = kind;
            ++f.faulty_rows;
            f.matched += matched;
            if (source) f.sources.push_back(*source);
            if (kind == "memory_stride" && !matched) f.unmatched.push_back({i, tests[i].user_token(t), h, -1, -1});
            f.rows_flagged.insert({&test, t, h});
            f.tokens.push_back(tests[i].user_token(t));
          }
        }
        return found;
      });
  std::map<std::string, MemoryFinding> found = join_findings(parts);
  complete_findings(found, rows, tests);
  return found;
}

// ---- where rows took their input from -----------------------------------------------------------

// The most common value and its count.
std::pair<std::int64_t, std::size_t> mode(std::vector<std::int64_t> v) {
  std::sort(v.begin(), v.end());
  std::pair<std::int64_t, std::size_t> best{0, 0};
  for (std::size_t i = 0; i < v.size();) {
    std::size_t k = i;
    while (k < v.size() && v[k] == v[i]) ++k;
    if (k - i > best.second) best = {v[i], k - i};
    i = k;
  }
  return best;
}

std::string signed_text(std::int64_t v) { return (v >= 0 ? "+" : "") + std::to_string(v); }

// "2t + h - 3": a read index in head rows.
std::string index_text(std::int64_t a, std::int64_t b, std::int64_t c) {
  std::string out = (a == 1 ? "" : std::to_string(a)) + "t";
  if (b != 0) out += (b > 0 ? " + " : " - ") + (std::abs(b) == 1 ? std::string() : std::to_string(std::abs(b))) + "h";
  if (c != 0) out += (c > 0 ? " + " : " - ") + std::to_string(std::abs(c));
  return out;
}

// The read index a·t + b·h + c (in head rows of the data laid out by `loc`) that the matched rows
// follow, by vote: a from rows of one head at two tokens, b from two heads of one token, c from
// every row; and how many matches follow it. Null unless at least 95 % of them do.
template <class Location>
std::optional<std::array<std::int64_t, 4>> read_index(const std::vector<MemoryFinding::Match>& matches, Location loc) {
  std::vector<std::int64_t> as, bs;
  std::map<std::int64_t, const MemoryFinding::Match*> last_of_head;
  std::map<std::int64_t, const MemoryFinding::Match*> last_of_token;
  for (const MemoryFinding::Match& m : matches) {
    if (auto it = last_of_head.find(m.h); it != last_of_head.end() && it->second->t != m.t) {
      const std::int64_t dl = loc(m) - loc(*it->second), dt = m.t - it->second->t;
      if (dl % dt == 0) as.push_back(dl / dt);
    }
    if (auto it = last_of_token.find(m.t); it != last_of_token.end() && it->second->h != m.h) {
      const std::int64_t dl = loc(m) - loc(*it->second), dh = m.h - it->second->h;
      if (dl % dh == 0) bs.push_back(dl / dh);
    }
    last_of_head[m.h] = &m;
    last_of_token[m.t] = &m;
  }
  if (as.empty()) return std::nullopt;
  const std::int64_t a = mode(as).first, b = bs.empty() ? 1 : mode(bs).first;
  std::vector<std::int64_t> cs;
  for (const MemoryFinding::Match& m : matches) cs.push_back(loc(m) - a * m.t - b * m.h);
  const auto [c, count] = mode(cs);
  if (count * 100 < matches.size() * 95) return std::nullopt;
  return std::array<std::int64_t, 4>{a, b, c, static_cast<std::int64_t>(count)};
}

// The layouts that the rows holding another row's input follow (judge/README.md "Explanation"):
// heads permuted (same token, a head table), rows read from a constant offset, a token stride or a
// head stride ignored. Each twice: rotated at the row's own position and at its source's.
std::vector<Variant> source_variants(const Spec& spec, const std::map<std::string, MemoryFinding>& memory,
                                     const std::vector<DiagnosedTest>& tests) {
  std::vector<Variant> out;
  const auto found = memory.find("memory_stride");
  if (found == memory.end()) return out;
  const MemoryFinding& m = found->second;
  // The rows that hold no input row: foreign norms matching none, zeros, the input itself.
  std::vector<MemoryFinding::Match> unmatched = m.unmatched;
  for (const char* kind : {"memory_zeros", "memory_identity"}) {
    const auto it = memory.find(kind);
    if (it == memory.end()) continue;
    for (const auto& [test, t, h] : it->second.rows_flagged) {
      for (std::size_t i = 0; i < tests.size(); ++i) {
        if (tests[i].test == test) unmatched.push_back({i, tests[i].user_token(t), h, -1, -1});
      }
    }
  }
  if (m.sources.size() < 3) return out;
  const Call& first = *tests[m.sources.front().test].test;
  const std::int64_t heads = first.heads;
  for (const MemoryFinding::Match& x : m.sources) {
    if (tests[x.test].test->heads != heads) return out;
  }
  auto both_positions = [&](Variant v, const std::string& own, const std::string& theirs) {
    v.memory = true;
    v.spec = spec;
    const std::string change = v.change;
    v.change = change + own;
    out.push_back(v);
    v.source.source_position = true;
    v.change = change + theirs;
    out.push_back(std::move(v));
  };
  // Heads permuted: every match in its own token, one source head per head.
  if (std::all_of(m.sources.begin(), m.sources.end(), [](const MemoryFinding::Match& x) { return x.st == x.t; })) {
    Variant v;
    v.source.kind = RowSource::Kind::head_table;
    std::size_t agree = 0;
    std::string list;
    bool permutation = true;
    std::set<std::int64_t> used;
    for (std::int64_t h = 0; h < heads; ++h) {
      std::vector<std::int64_t> from;
      for (const MemoryFinding::Match& x : m.sources) {
        if (x.h == h) from.push_back(x.sh);
      }
      const auto [src, count] = from.empty() ? std::pair<std::int64_t, std::size_t>{h, 0} : mode(from);
      agree += count;
      v.source.head.push_back(src);
      permutation &= used.insert(src).second;
      if (src != h) {
        if (std::count_if(list.begin(), list.end(), [](char ch) { return ch == ','; }) >= 7) {
          if (list.find("...") == std::string::npos) list += ", ...";
        } else {
          list += (list.empty() ? "" : ", ") + std::string("head ") + std::to_string(h) + " holds head " + std::to_string(src) + "'s input";
        }
      }
    }
    if (agree * 100 >= m.sources.size() * 95 && !list.empty()) {
      v.kind = "head_permuted";
      v.change = (permutation ? "heads permuted (" : "heads holding another head's input (") + list + ")";
      both_positions(v, ", each rotated at its own position", ", each rotated at its source's position");
      return out;
    }
  }
  // A linear read index over token-major data of s head rows per token (s = heads, 2·heads, ...,
  // 16·heads: the data may be a slice of a wider buffer), then over head-major data ([heads,
  // tokens]). The one most matches follow goes first; among equals (with few heads several s
  // describe the matches alike), the one that places the fewest rows holding no input row (foreign
  // norms matching none, zeros, the input) on a row of the input the sample holds (such a row
  // would have matched), then the smallest s.
  std::optional<std::array<std::int64_t, 6>> chosen;
  const auto contradictions = [&](std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t s) {
    RowSource r;
    r.kind = RowSource::Kind::token_major;
    r.a = a, r.b = b, r.c = c, r.s = s;
    std::int64_t n = 0;
    for (const MemoryFinding::Match& x : unmatched) {
      std::int64_t st = 0, sh = 0;
      n += r.find(x.t, x.h, heads, st, sh) && sample_token(tests[x.test], st) >= 0;
    }
    return n;
  };
  const auto better = [&](const std::array<std::int64_t, 6>& l, const std::array<std::int64_t, 6>& r) {
    if (l[3] != r[3]) return l[3] > r[3];
    return l[5] < r[5];
  };
  for (std::int64_t k = 1; k <= 16; ++k) {
    const std::int64_t s = k * heads;
    const auto fitted = read_index(m.sources, [&](const MemoryFinding::Match& x) { return x.st * s + x.sh; });
    if (!fitted || ((*fitted)[0] == s && (*fitted)[1] == 1 && (*fitted)[2] == 0)) continue;
    const auto [a, b, c, count] = *fitted;
    const std::array<std::int64_t, 6> found{a, b, c, count, s, contradictions(a, b, c, s)};
    if (!chosen || better(found, *chosen)) chosen = found;
  }
  if (chosen) {
    const auto [a, b, c, count, s, wrong] = *chosen;
    (void)count, (void)wrong;
    Variant v;
    v.source.kind = RowSource::Kind::token_major;
    v.source.a = a, v.source.b = b, v.source.c = c, v.source.s = s;
    if (a == s && b == 1 && s == heads) {
      v.kind = "memory_offset";
      v.change = "rows read from the wrong offset: row r (token x head) holds row r" + signed_text(c) + "'s input" +
                 (c % heads == 0 ? " (token t holds token t" + signed_text(c / heads) + "'s)" : std::string());
    } else if (b == 1) {
      v.kind = "memory_stride";
      v.change = "another token's data: the token stride ignored (token t, head h reads head row " + index_text(a, b, c) +
                 " as if tokens were " + std::to_string(a) + " head rows apart; the data's tokens are " + std::to_string(s) +
                 " head rows apart: a non-contiguous slice walked as contiguous)";
    } else {
      v.kind = "memory_head_stride";
      v.change = "another head's data: the head stride ignored (token t, head h reads head row " + index_text(a, b, c) + " of data with " +
                 std::to_string(s) + " head rows per token)";
    }
    both_positions(v, ", rotated at its own position", ", rotated at the position of the row it read");
    return out;
  }
  // Head-major data ([heads, tokens]) walked as [tokens, heads]: token t, head h reads row t·heads + h
  // of it, i.e. head (t·heads + h) / T, token (t·heads + h) mod T of T tokens, T by vote.
  std::vector<std::int64_t> ts;
  for (const MemoryFinding::Match& x : m.sources) {
    if (x.sh > 0 && (x.t * heads + x.h - x.st) % x.sh == 0) ts.push_back((x.t * heads + x.h - x.st) / x.sh);
  }
  if (ts.empty()) return out;
  const std::int64_t t_all = mode(ts).first;
  if (t_all <= 0) return out;
  const std::size_t agree = static_cast<std::size_t>(std::count_if(
      m.sources.begin(), m.sources.end(), [&](const MemoryFinding::Match& x) { return x.sh * t_all + x.st == x.t * heads + x.h; }));
  if (agree * 100 < m.sources.size() * 95) return out;
  Variant v;
  v.source.kind = RowSource::Kind::head_major;
  v.source.a = heads, v.source.b = 1, v.source.c = 0, v.source.s = t_all;
  v.kind = "memory_head_stride";
  v.change = "another head's data: the head stride ignored (a [heads, tokens] layout of " + std::to_string(t_all) +
             " tokens walked as [tokens, heads]: token t, head h reads head h' = (" + std::to_string(heads) + "t + h) / " +
             std::to_string(t_all) + " at token (" + std::to_string(heads) + "t + h) mod " + std::to_string(t_all) + ")";
  both_positions(v, ", rotated at its own position", ", rotated at the position of the row it read");
  return out;
}

}  // namespace ropecheck::judge::inference_detail
