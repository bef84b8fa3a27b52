// "Did you mean": the closest known word to a misspelt one, for every message that refuses a word
// from a closed set (spec keys, scaling types, models, commands, options). The distance is the
// optimal string alignment distance (Levenshtein with adjacent transpositions, Damerau 1964); a
// word is suggested when it is the one closest, within a third of its length (at least 1, at most
// 3 edits), so that an unrelated word is never offered.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace ropecheck {

inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

// " (did you mean 'WORD'?)", or "" when no known word is close enough or two are equally close.
// Words longer than 64 characters are not compared (the distance is quadratic in the length).
inline std::string did_you_mean(std::string_view got, const std::vector<std::string_view>& known) {
  if (got.empty() || got.size() > 64) return "";
  const std::size_t limit = std::clamp<std::size_t>(got.size() / 3, 1, 3);
  std::size_t best = limit + 1;
  std::string_view word;
  bool tie = false;
  for (std::string_view k : known) {
    if (k.size() > 64 || k == got) continue;
    const std::size_t dist = edit_distance(got, k);
    if (dist < best) {
      best = dist;
      word = k;
      tie = false;
    } else if (dist == best) {
      tie = true;
    }
  }
  if (best > limit || tie) return "";
  return " (did you mean '" + std::string(word) + "'?)";
}

}  // namespace ropecheck
