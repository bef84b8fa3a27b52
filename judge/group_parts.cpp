#include "judge/group_parts.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>

namespace ropecheck::judge {

double recorded_severity(const Case& c, Tolerance::Kind metric) {
  const bool measured = c.kind == CaseKind::tolerance || (c.kind == CaseKind::signed_zero && c.domain != Domain::special_input);
  const double v = measured ? (metric == Tolerance::Kind::e ? c.e : c.ulp) : std::numeric_limits<double>::infinity();
  return std::isnan(v) ? std::numeric_limits<double>::infinity() : v;
}

GroupResult join_group_parts(const std::vector<GroupResult>& parts, const Settings& settings) {
  detail::GroupTally tally(settings);
  GroupResult& r = tally.result;
  const GroupResult& first = parts.front();
  r.kind = first.kind;
  r.suite = first.suite;
  r.index = first.index;
  r.spec = first.spec;
  r.dtype = first.dtype;
  r.tolerance = first.tolerance;
  r.attention_magnitude = first.attention_magnitude;
  r.max_frequency = first.max_frequency;
  // A listed case, in the order the joined tally records it: by test, then as its part listed it.
  struct Listed {
    std::int64_t test_id;
    std::size_t part, index;
  };
  std::vector<Listed> listed;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const GroupResult& p = parts[k];
    for (std::int64_t GroupResult::*count :
         {&GroupResult::tests, &GroupResult::tests_failed, &GroupResult::tests_skipped, &GroupResult::skipped_by_flags,
          &GroupResult::skipped_by_position, &GroupResult::tokens_beyond_max_position, &GroupResult::pairs_checked,
          &GroupResult::pairs_failed, &GroupResult::ordinary_checked, &GroupResult::ordinary_failed, &GroupResult::special_checked,
          &GroupResult::special_failed, &GroupResult::edge_failed, &GroupResult::signed_zero_failed, &GroupResult::passthrough_checked,
          &GroupResult::passthrough_failed, &GroupResult::whole_tests_failed, &GroupResult::beyond_required_failed,
          &GroupResult::inputs_rounded}) {
      r.*count += p.*count;
    }
    // The first pair of the largest e in the order of positions.
    if (p.worst_e_position >= 0 &&
        (r.worst_e_position < 0 || p.worst_e > r.worst_e || (p.worst_e == r.worst_e && p.worst_e_position < r.worst_e_position))) {
      r.worst_e = p.worst_e;
      r.worst_e_position = p.worst_e_position;
      r.worst_e_pair = p.worst_e_pair;
    }
    r.worst_ulp = std::max(r.worst_ulp, p.worst_ulp);
    r.worst_abs = std::max(r.worst_abs, p.worst_abs);
    r.worst_margin = std::max(r.worst_margin, p.worst_margin);
    for (const Point& point : p.points) {
      tally.record_position(point.position, point.pass);
      r.points.push_back(point);
    }
    r.max_position = std::max(r.max_position, p.max_position);
    r.outcomes.insert(r.outcomes.end(), p.outcomes.begin(), p.outcomes.end());
    for (std::size_t i = 0; i < p.worst.size(); ++i) listed.push_back({p.worst[i].test_id, k, i});
  }
  std::stable_sort(r.outcomes.begin(), r.outcomes.end(), [](const TestOutcome& a, const TestOutcome& b) { return a.id < b.id; });
  std::sort(listed.begin(), listed.end(),
            [](const Listed& a, const Listed& b) { return std::tie(a.test_id, a.part, a.index) < std::tie(b.test_id, b.part, b.index); });
  for (const Listed& l : listed) {
    Case c = parts[l.part].worst[l.index];
    c.severity = recorded_severity(c, first.tolerance.kind);
    tally.record_case(std::move(c));
  }
  return tally.finish();
}

}  // namespace ropecheck::judge
