#include "gate/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "gate/report_parts.h"
#include "reference/rounding.h"

namespace ropecheck::gate {
using namespace report_detail;

namespace {

// A group's diagnosis, as the report's "diagnosis" object.
ojson diagnosis_json(const judge::GroupDiagnosis& d) {
  ojson o = {{"lines", d.lines},
             {"mistake", d.mistake.empty() ? ojson(nullptr) : ojson(d.mistake)},
             {"mistake_within", d.mistake_within},
             {"mistake_identical", d.mistake_identical},
             {"angle_error_rad", number(d.angle_error_rad)},
             {"angle_error_ulps", number(d.angle_error_ulps)},
             {"frequency_error_ulps", number(d.frequency_error_ulps)},
             {"frequency_error_pair", d.frequency_error_pair},
             {"frequency_growth", d.frequency_growth},
             {"position_offset", d.position_offset},
             {"rotation_e", number(d.rotation_e)},
             {"explanation", d.explanation.empty() ? ojson(nullptr) : ojson(d.explanation)},
             {"explanation_kind", d.explanation_kind.empty() ? ojson(nullptr) : ojson(d.explanation_kind)},
             {"headline", d.headline.empty() ? ojson(nullptr) : ojson(d.headline)}};
  ojson frequencies = ojson::array();
  for (const judge::GroupDiagnosis::Frequency& f : d.frequencies) {
    frequencies.push_back(
        {{"pair", f.pair}, {"expected", number(f.expected)}, {"fitted", std::isnan(f.fitted) ? ojson(nullptr) : ojson(number(f.fitted))}});
  }
  o["frequencies"] = frequencies;
  return o;
}

// One of a group's worst cases, as an element of "worst_cases".
ojson case_json(const Case& c) {
  ojson w;
  w["test_id"] = c.test_id;
  w["kind"] = std::string(judge::name(c.kind));
  w["accuracy"] = c.accuracy;
  if (c.domain) w["domain"] = std::string(judge::name(*c.domain));
  if (!c.quantity.empty()) w["quantity"] = c.quantity;
  w["message"] = c.message;
  w["position"] = c.position;
  w["token"] = c.token;
  w["head"] = c.head;
  w["dims"] = c.dim < 0 ? ojson::array() : (c.second_dim < 0 ? ojson::array({c.dim}) : ojson::array({c.dim, c.second_dim}));
  if (c.quantity.empty()) {
    w["input"] = {reference::to_hex(c.input_x), reference::to_hex(c.input_y)};
    w["expected"] = {reference::to_hex(c.expected_a), reference::to_hex(c.expected_b)};
    w["got"] = {reference::to_hex(c.got_a), reference::to_hex(c.got_b)};
  } else {  // one attention value: no input pair
    w["input"] = ojson::array();
    w["expected"] = {reference::to_hex(c.expected_a)};
    w["got"] = {reference::to_hex(c.got_a)};
    w["unit"] = number(c.unit);
    w["tolerance"] = number(c.tolerance);
  }
  w["e"] = number(c.e);
  w["ulp"] = number(c.ulp);
  w["abs"] = number(c.abs);
  return w;
}

// A group's attention figures, as its "attention" object.
ojson attention_json(const AttentionStats& a) {
  return {{"score_tolerance", a.score_tolerance},
          {"score_tolerance_source", a.score_source},
          {"output_tolerance_min", a.output_tolerance_min},
          {"output_tolerance_max", a.output_tolerance_max},
          {"output_tolerance_source", a.output_source},
          {"scores_checked", a.scores_checked},
          {"scores_failed", a.scores_failed},
          {"scores_masked", a.scores_masked},
          {"outputs_checked", a.outputs_checked},
          {"outputs_failed", a.outputs_failed},
          {"worst_score_e", number(a.worst_score_e)},
          {"worst_output_e", number(a.worst_output_e)},
          {"worst_output_margin", number(a.worst_output_margin)},
          {"worst_output_margin_e", number(a.worst_output_margin_e)},
          {"worst_output_margin_tolerance", number(a.worst_output_margin_tolerance)}};
}

// One group, as an element of "groups".
ojson group_json(const GroupResult& g) {
  ojson o;
  o["kind"] = std::string(golden::name(g.kind));
  o["suite"] = g.suite;
  o["group"] = g.index;
  o["spec"] = g.spec;
  o["dtype"] = std::string(ropecheck::name(g.dtype));
  o["verdict"] = std::string(judge::name(g.verdict));
  o["tolerance"] = {
      {"kind", metric_name(g)}, {"value", g.tolerance.value}, {"per_radian", g.tolerance.per_radian}, {"source", g.tolerance.source}};
  o["attention_magnitude"] = g.attention_magnitude;
  o["tests"] = g.tests;
  o["tests_failed"] = g.tests_failed;
  o["tests_skipped"] = g.tests_skipped;
  o["pairs_checked"] = g.pairs_checked;
  o["pairs_failed"] = g.pairs_failed;
  o["passthrough_checked"] = g.passthrough_checked;
  o["passthrough_failed"] = g.passthrough_failed;
  o["special_checked"] = g.special_checked;
  o["special_failed"] = g.special_failed;
  o["ordinary_checked"] = g.ordinary_checked;
  o["ordinary_failed"] = g.ordinary_failed;
  o["edge_failed"] = g.edge_failed;
  o["signed_zero_failed"] = g.signed_zero_failed;
  o["whole_tests_failed"] = g.whole_tests_failed;
  o["beyond_required_failed"] = g.beyond_required_failed;
  o["skipped_by_flags"] = g.skipped_by_flags;
  o["skipped_by_position"] = g.skipped_by_position;
  o["tokens_beyond_max_position"] = g.tokens_beyond_max_position;
  o["worst_e"] = number(g.worst_e);
  o["worst_e_position"] = g.worst_e_position;
  o["worst_ulp"] = number(g.worst_ulp);
  o["worst_abs"] = number(g.worst_abs);
  o["max_position"] = g.max_position;
  o["horizon"] = g.horizon ? ojson(*g.horizon) : ojson(nullptr);
  o["horizon_complete"] = g.horizon_complete;
  o["verdict_reason"] = g.verdict_reason;
  o["worst_margin"] = number(g.worst_margin);
  if (g.diagnosis) o["diagnosis"] = diagnosis_json(*g.diagnosis);
  o["failed_tests"] = failed_ids(g);
  ojson skips = ojson::array();
  for (const TestOutcome& t : g.outcomes) {
    if (t.status == judge::Verdict::skip) skips.push_back({{"id", t.id}, {"reason", t.reason}});
  }
  o["skipped_tests"] = skips;
  ojson worst = ojson::array();
  for (const Case& c : g.worst) {
    worst.push_back(case_json(c));
  }
  o["worst_cases"] = worst;
  ojson points = ojson::array();
  for (const Point& p : g.points) points.push_back({p.position, number(p.e), p.pass});
  o["points"] = points;
  if (g.attention) o["attention"] = attention_json(*g.attention);
  return o;
}

}  // namespace

std::string to_json(const Report& r) {
  ojson j;
  j["schema"] = "ropecheck-report/1";
  j["tool"] = {{"name", "ropecheck"}, {"version", r.tool_version.empty() ? std::string(ROPECHECK_VERSION) : r.tool_version}};
  j["command"] = r.command;
  j["implementation"] = r.implementation;
  j["candidate"] = r.candidate;
  j["model"] = std::string(name(r.model));
  j["golden"] = r.golden_files;
  j["verdict"] = std::string(judge::name(r.verdict));
  std::int64_t tests = 0, failed = 0, skipped = 0, groups_failed = 0;
  ojson groups = ojson::array();
  for (const GroupResult& g : r.groups) {
    tests += g.tests;
    failed += g.tests_failed;
    skipped += g.tests_skipped;
    groups_failed += g.verdict == judge::Verdict::fail;
    groups.push_back(group_json(g));
  }
  j["summary"] = {{"groups", r.groups.size()}, {"groups_failed", groups_failed}, {"tests", tests},
                  {"tests_failed", failed}, {"tests_skipped", skipped},
                  {"skipped_by_flags", r.scope.skipped_by_flags}, {"skipped_by_position", r.scope.skipped_by_position}};
  j["options"] = {{"max_position", r.scope.max_position ? ojson(*r.scope.max_position) : ojson(nullptr)},
                  {"require_horizon", r.scope.require_horizon ? ojson(*r.scope.require_horizon) : ojson(nullptr)},
                  {"skip_flags", r.scope.skip_flags},
                  {"strict_zeros", r.scope.strict_zeros}};
  j["groups"] = groups;
  ojson props = ojson::array();
  for (const PropertyResult& p : r.properties) {
    props.push_back({{"name", p.name}, {"formula", p.formula}, {"proof", p.proof}, {"holds", p.holds}, {"cases", p.cases},
                     {"gave_up", p.gave_up}, {"worst_units", number(p.worst_units)}, {"failure", p.failure},
                     {"counterexample", p.counterexample}, {"replay", p.replay}});
  }
  j["properties"] = props;
  j["notes"] = r.notes;
  if (r.sweep) {
    j["sweep"] = {{"seed", r.sweep->seed},
                  {"samples", r.sweep->samples},
                  {"max_position", r.sweep->max_position},
                  {"shard", {{"index", r.sweep->shard_index}, {"count", r.sweep->shard_count}}},
                  {"worst_cases", r.sweep->worst_cases}};
  }
  // File and implementation names are bytes, not always UTF-8: invalid sequences become U+FFFD
  // instead of failing the report (nlohmann's type_error.316).
  return j.dump(1, ' ', false, ojson::error_handler_t::replace) + "\n";
}

}  // namespace ropecheck::gate
