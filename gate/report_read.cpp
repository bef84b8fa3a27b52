#include "gate/report_read.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "base/errors.h"
#include "golden/golden.h"
#include "judge/pair_rule.h"
#include "reference/rounding.h"

namespace ropecheck::gate {
namespace {

using ojson = nlohmann::ordered_json;

// The enumerator whose name (the report's word for it) is `text`; enumerators 0 to `last`.
template <class Enum>
std::optional<Enum> by_name(std::string_view text, Enum last) {
  for (int i = 0; i <= static_cast<int>(last); ++i) {
    if (name(static_cast<Enum>(i)) == text) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

// One report's fields, each named by its path ("groups[0].worst_cases[2].e") in the errors.
class Fields {
 public:
  explicit Fields(const std::string& file) : file_(file) {}

  [[noreturn]] void bad(const std::string& where, const std::string& what) const {
    throw InputError(file_ + ": " + where + ": expected " + what);
  }
  static std::string path(const std::string& where, std::string_view key) {
    return where.empty() ? std::string(key) : where + "." + std::string(key);
  }
  static std::string item(const std::string& where, std::size_t i) { return where + "[" + std::to_string(i) + "]"; }

  const ojson& at(const ojson& o, const std::string& where, const char* key) const {
    if (!o.is_object() || !o.contains(key)) bad(path(where, key), "a field of a ropecheck JSON report, got none");
    return o.at(key);
  }
  const ojson& object(const ojson& o, const std::string& where, const char* key) const {
    const ojson& v = at(o, where, key);
    if (!v.is_object()) bad(path(where, key), "an object");
    return v;
  }
  const ojson& array(const ojson& o, const std::string& where, const char* key) const {
    const ojson& v = at(o, where, key);
    if (!v.is_array()) bad(path(where, key), "an array");
    return v;
  }
  std::string text(const ojson& v, const std::string& where) const {
    if (!v.is_string()) bad(where, "a string");
    return v.get<std::string>();
  }
  std::string text(const ojson& o, const std::string& where, const char* key) const { return text(at(o, where, key), path(where, key)); }
  // A string written as null when empty.
  std::string text_or_null(const ojson& o, const std::string& where, const char* key) const {
    const ojson& v = at(o, where, key);
    return v.is_null() ? std::string() : text(v, path(where, key));
  }
  std::vector<std::string> texts(const ojson& o, const std::string& where, const char* key) const {
    std::vector<std::string> out;
    const ojson& list = array(o, where, key);
    for (std::size_t i = 0; i < list.size(); ++i) out.push_back(text(list[i], item(path(where, key), i)));
    return out;
  }
  std::int64_t integer(const ojson& v, const std::string& where) const {
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > std::numeric_limits<std::int64_t>::max())) {
      bad(where, "an integer");
    }
    return v.get<std::int64_t>();
  }
  std::int64_t integer(const ojson& o, const std::string& where, const char* key) const {
    return integer(at(o, where, key), path(where, key));
  }
  int small(const ojson& o, const std::string& where, const char* key) const {
    const std::int64_t v = integer(o, where, key);
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) bad(path(where, key), "an integer of 32 bits");
    return static_cast<int>(v);
  }
  std::optional<std::int64_t> integer_or_null(const ojson& o, const std::string& where, const char* key) const {
    const ojson& v = at(o, where, key);
    if (v.is_null()) return std::nullopt;
    return integer(v, path(where, key));
  }
  bool flag(const ojson& v, const std::string& where) const {
    if (!v.is_boolean()) bad(where, "true or false");
    return v.get<bool>();
  }
  bool flag(const ojson& o, const std::string& where, const char* key) const { return flag(at(o, where, key), path(where, key)); }
  // A metric (report_detail::number): a number, or "inf", "-inf", "nan".
  double metric(const ojson& v, const std::string& where) const {
    if (v.is_number()) return v.get<double>();
    if (v == "inf") return std::numeric_limits<double>::infinity();
    if (v == "-inf") return -std::numeric_limits<double>::infinity();
    if (v == "nan") return std::numeric_limits<double>::quiet_NaN();
    bad(where, "a number, \"inf\" or \"nan\"");
  }
  double metric(const ojson& o, const std::string& where, const char* key) const { return metric(at(o, where, key), path(where, key)); }
  // A double written as it is: null is how JSON writes a NaN or infinity.
  double plain(const ojson& o, const std::string& where, const char* key) const {
    const ojson& v = at(o, where, key);
    if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (!v.is_number()) bad(path(where, key), "a number");
    return v.get<double>();
  }
  double hex(const ojson& v, const std::string& where) const {
    const std::optional<double> value = v.is_string() ? reference::parse_hex(v.get<std::string>()) : std::nullopt;
    if (!value) bad(where, "a hex float (0x1.8p-1, nan, inf)");
    return *value;
  }
  template <class Enum>
  Enum named(const ojson& o, const std::string& where, const char* key, Enum last, const char* what) const {
    const std::optional<Enum> v = by_name(text(o, where, key), last);
    if (!v) bad(path(where, key), what);
    return *v;
  }

 private:
  const std::string& file_;
};

judge::Case case_from(const Fields& f, const ojson& o, const std::string& where, const std::string& suite) {
  judge::Case c;
  c.suite = suite;
  c.test_id = f.integer(o, where, "test_id");
  c.kind = f.named(o, where, "kind", judge::CaseKind::unavailable, "a case kind (judge/group.h CaseKind)");
  c.accuracy = f.flag(o, where, "accuracy");
  if (o.contains("domain")) c.domain = f.named(o, where, "domain", judge::Domain::subnormal, "a domain (judge/pair_rule.h Domain)");
  if (o.contains("quantity")) c.quantity = f.text(o, where, "quantity");
  c.message = f.text(o, where, "message");
  c.position = f.integer(o, where, "position");
  c.token = f.integer(o, where, "token");
  c.head = f.integer(o, where, "head");
  const ojson& dims = f.array(o, where, "dims");
  if (dims.size() > 2) f.bad(Fields::path(where, "dims"), "at most two dims");
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::int64_t d = f.integer(dims[i], Fields::item(Fields::path(where, "dims"), i));
    if (d < 0 || d > std::numeric_limits<int>::max()) f.bad(Fields::item(Fields::path(where, "dims"), i), "a dim >= 0");
    (i == 0 ? c.dim : c.second_dim) = static_cast<int>(d);
  }
  // A RoPE pair's two values, or one attention value (no input).
  const std::size_t values = c.quantity.empty() ? 2 : 1;
  auto pair = [&](const char* key, std::size_t count, double& a, double& b) {
    const ojson& list = f.array(o, where, key);
    if (list.size() != count) f.bad(Fields::path(where, key), std::to_string(count) + " hex floats");
    if (count > 0) a = f.hex(list[0], Fields::item(Fields::path(where, key), 0));
    if (count > 1) b = f.hex(list[1], Fields::item(Fields::path(where, key), 1));
  };
  pair("input", values == 2 ? 2 : 0, c.input_x, c.input_y);
  pair("expected", values, c.expected_a, c.expected_b);
  pair("got", values, c.got_a, c.got_b);
  if (!c.quantity.empty()) {
    c.unit = f.metric(o, where, "unit");
    c.tolerance = f.metric(o, where, "tolerance");
  }
  c.e = f.metric(o, where, "e");
  c.ulp = f.metric(o, where, "ulp");
  c.abs = f.metric(o, where, "abs");
  return c;
}

judge::GroupDiagnosis diagnosis_from(const Fields& f, const ojson& o, const std::string& where) {
  judge::GroupDiagnosis d;
  d.lines = f.texts(o, where, "lines");
  d.mistake = f.text_or_null(o, where, "mistake");
  d.mistake_within = f.plain(o, where, "mistake_within");
  d.mistake_identical = f.plain(o, where, "mistake_identical");
  d.angle_error_rad = f.metric(o, where, "angle_error_rad");
  d.angle_error_ulps = f.metric(o, where, "angle_error_ulps");
  d.frequency_error_ulps = f.metric(o, where, "frequency_error_ulps");
  d.frequency_error_pair = f.small(o, where, "frequency_error_pair");
  d.frequency_growth = f.text(o, where, "frequency_growth");
  d.position_offset = f.plain(o, where, "position_offset");
  d.rotation_e = f.metric(o, where, "rotation_e");
  d.explanation = f.text_or_null(o, where, "explanation");
  d.explanation_kind = f.text_or_null(o, where, "explanation_kind");
  // Reports written before the headline existed have none: read as none.
  if (o.contains("headline")) d.headline = f.text_or_null(o, where, "headline");
  const ojson& frequencies = f.array(o, where, "frequencies");
  for (std::size_t i = 0; i < frequencies.size(); ++i) {
    const std::string at = Fields::item(Fields::path(where, "frequencies"), i);
    const ojson& fitted = f.at(frequencies[i], at, "fitted");
    d.frequencies.push_back({.pair = f.small(frequencies[i], at, "pair"),
                             .expected = f.metric(frequencies[i], at, "expected"),
                             .fitted = fitted.is_null() ? std::numeric_limits<double>::quiet_NaN() : f.metric(fitted, at + ".fitted")});
  }
  return d;
}

judge::AttentionStats attention_from(const Fields& f, const ojson& o, const std::string& where) {
  judge::AttentionStats a;
  a.score_tolerance = f.plain(o, where, "score_tolerance");
  a.score_source = f.text(o, where, "score_tolerance_source");
  a.output_tolerance_min = f.plain(o, where, "output_tolerance_min");
  a.output_tolerance_max = f.plain(o, where, "output_tolerance_max");
  a.output_source = f.text(o, where, "output_tolerance_source");
  a.scores_checked = f.integer(o, where, "scores_checked");
  a.scores_failed = f.integer(o, where, "scores_failed");
  a.scores_masked = f.integer(o, where, "scores_masked");
  a.outputs_checked = f.integer(o, where, "outputs_checked");
  a.outputs_failed = f.integer(o, where, "outputs_failed");
  a.worst_score_e = f.metric(o, where, "worst_score_e");
  a.worst_output_e = f.metric(o, where, "worst_output_e");
  a.worst_output_margin = f.metric(o, where, "worst_output_margin");
  a.worst_output_margin_e = f.metric(o, where, "worst_output_margin_e");
  a.worst_output_margin_tolerance = f.metric(o, where, "worst_output_margin_tolerance");
  return a;
}

judge::GroupResult group_from(const Fields& f, const ojson& o, const std::string& where) {
  if (!o.is_object()) f.bad(where, "an object");
  judge::GroupResult g;
  g.kind = f.named(o, where, "kind", golden::Kind::attention, "\"rope\" or \"attention\"");
  g.suite = f.text(o, where, "suite");
  g.index = f.small(o, where, "group");
  g.spec = f.text(o, where, "spec");
  g.dtype = f.named(o, where, "dtype", Dtype::bf16, "f64, f32, f16 or bf16");
  g.verdict = f.named(o, where, "verdict", judge::Verdict::skip, "\"pass\", \"fail\" or \"skip\"");
  const std::string tolerance = Fields::path(where, "tolerance");
  const ojson& t = f.object(o, where, "tolerance");
  const std::string kind = f.text(t, tolerance, "kind");
  if (kind != "e" && kind != "ulp") f.bad(tolerance + ".kind", "\"e\" or \"ulp\"");
  g.tolerance.kind = kind == "e" ? judge::Tolerance::Kind::e : judge::Tolerance::Kind::ulp;
  g.tolerance.value = f.plain(t, tolerance, "value");
  g.tolerance.per_radian = f.plain(t, tolerance, "per_radian");
  g.tolerance.source = f.text(t, tolerance, "source");
  g.attention_magnitude = f.plain(o, where, "attention_magnitude");
  using Count = std::int64_t judge::GroupResult::*;
  const std::pair<const char*, Count> counts[] = {{"tests", &judge::GroupResult::tests},
                                                  {"tests_failed", &judge::GroupResult::tests_failed},
                                                  {"tests_skipped", &judge::GroupResult::tests_skipped},
                                                  {"pairs_checked", &judge::GroupResult::pairs_checked},
                                                  {"pairs_failed", &judge::GroupResult::pairs_failed},
                                                  {"passthrough_checked", &judge::GroupResult::passthrough_checked},
                                                  {"passthrough_failed", &judge::GroupResult::passthrough_failed},
                                                  {"special_checked", &judge::GroupResult::special_checked},
                                                  {"special_failed", &judge::GroupResult::special_failed},
                                                  {"ordinary_checked", &judge::GroupResult::ordinary_checked},
                                                  {"ordinary_failed", &judge::GroupResult::ordinary_failed},
                                                  {"edge_failed", &judge::GroupResult::edge_failed},
                                                  {"signed_zero_failed", &judge::GroupResult::signed_zero_failed},
                                                  {"whole_tests_failed", &judge::GroupResult::whole_tests_failed},
                                                  {"beyond_required_failed", &judge::GroupResult::beyond_required_failed},
                                                  {"skipped_by_flags", &judge::GroupResult::skipped_by_flags},
                                                  {"skipped_by_position", &judge::GroupResult::skipped_by_position},
                                                  {"tokens_beyond_max_position", &judge::GroupResult::tokens_beyond_max_position}};
  for (const auto& [key, count] : counts) g.*count = f.integer(o, where, key);
  g.worst_e = f.metric(o, where, "worst_e");
  g.worst_e_position = f.integer(o, where, "worst_e_position");
  g.worst_ulp = f.metric(o, where, "worst_ulp");
  g.worst_abs = f.metric(o, where, "worst_abs");
  g.max_position = f.integer(o, where, "max_position");
  g.horizon = f.integer_or_null(o, where, "horizon");
  g.horizon_complete = f.flag(o, where, "horizon_complete");
  g.verdict_reason = f.text(o, where, "verdict_reason");
  g.worst_margin = f.metric(o, where, "worst_margin");
  if (o.contains("diagnosis")) g.diagnosis = diagnosis_from(f, f.object(o, where, "diagnosis"), Fields::path(where, "diagnosis"));
  const ojson& failed = f.array(o, where, "failed_tests");
  for (std::size_t i = 0; i < failed.size(); ++i) {
    g.outcomes.push_back({f.integer(failed[i], Fields::item(Fields::path(where, "failed_tests"), i)), judge::Verdict::fail, ""});
  }
  const ojson& skipped = f.array(o, where, "skipped_tests");
  for (std::size_t i = 0; i < skipped.size(); ++i) {
    const std::string at = Fields::item(Fields::path(where, "skipped_tests"), i);
    g.outcomes.push_back({f.integer(skipped[i], at, "id"), judge::Verdict::skip, f.text(skipped[i], at, "reason")});
  }
  const ojson& cases = f.array(o, where, "worst_cases");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    g.worst.push_back(case_from(f, cases[i], Fields::item(Fields::path(where, "worst_cases"), i), g.suite));
  }
  const ojson& points = f.array(o, where, "points");
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string at = Fields::item(Fields::path(where, "points"), i);
    const ojson& p = points[i];
    if (!p.is_array() || p.size() != 3) f.bad(at, "[position, e, pass]");
    g.points.push_back({f.integer(p[0], at + "[0]"), f.metric(p[1], at + "[1]"), f.flag(p[2], at + "[2]")});
  }
  if (o.contains("attention")) g.attention = attention_from(f, f.object(o, where, "attention"), Fields::path(where, "attention"));
  return g;
}

PropertyResult property_from(const Fields& f, const ojson& o, const std::string& where) {
  PropertyResult p;
  p.name = f.text(o, where, "name");
  p.formula = f.text(o, where, "formula");
  p.proof = f.text(o, where, "proof");
  p.holds = f.flag(o, where, "holds");
  p.cases = f.small(o, where, "cases");
  p.gave_up = f.flag(o, where, "gave_up");
  p.worst_units = f.metric(o, where, "worst_units");
  p.failure = f.text(o, where, "failure");
  p.counterexample = f.text(o, where, "counterexample");
  p.replay = f.text(o, where, "replay");
  return p;
}

}  // namespace

Report report_from_json(const std::string& file, const ojson& j) {
  const Fields f(file);
  if (!j.is_object()) f.bad("report", "a JSON object");
  if (f.text(j, "", "schema") != "ropecheck-report/1") f.bad("schema", "\"ropecheck-report/1\"");
  Report r;
  const ojson& tool = f.object(j, "", "tool");
  if (f.text(tool, "tool", "name") != "ropecheck") f.bad("tool.name", "\"ropecheck\"");
  r.tool_version = f.text(tool, "tool", "version");
  r.command = f.text(j, "", "command");
  r.implementation = f.text(j, "", "implementation");
  r.candidate = f.text(j, "", "candidate");
  r.model = f.named(j, "", "model", judge::Model::f32_recipe, "exact, f32-angle or f32-recipe");
  r.golden_files = f.texts(j, "", "golden");
  r.verdict = f.named(j, "", "verdict", judge::Verdict::skip, "\"pass\" or \"fail\"");
  const ojson& summary = f.object(j, "", "summary");
  r.scope.skipped_by_flags = f.integer(summary, "summary", "skipped_by_flags");
  r.scope.skipped_by_position = f.integer(summary, "summary", "skipped_by_position");
  const ojson& options = f.object(j, "", "options");
  r.scope.max_position = f.integer_or_null(options, "options", "max_position");
  r.scope.require_horizon = f.integer_or_null(options, "options", "require_horizon");
  r.scope.skip_flags = f.texts(options, "options", "skip_flags");
  r.scope.strict_zeros = f.flag(options, "options", "strict_zeros");
  const ojson& groups = f.array(j, "", "groups");
  for (std::size_t i = 0; i < groups.size(); ++i) r.groups.push_back(group_from(f, groups[i], Fields::item("groups", i)));
  const ojson& properties = f.array(j, "", "properties");
  for (std::size_t i = 0; i < properties.size(); ++i) {
    r.properties.push_back(property_from(f, properties[i], Fields::item("properties", i)));
  }
  r.notes = f.texts(j, "", "notes");
  if (j.contains("sweep")) {
    const ojson& s = f.object(j, "", "sweep");
    const ojson& shard = f.object(s, "sweep", "shard");
    r.sweep = SweepScope{.seed = 0,
                         .samples = f.integer(s, "sweep", "samples"),
                         .max_position = f.integer(s, "sweep", "max_position"),
                         .shard_index = f.small(shard, "sweep.shard", "index"),
                         .shard_count = f.small(shard, "sweep.shard", "count"),
                         .worst_cases = f.small(s, "sweep", "worst_cases")};
    const ojson& seed = f.at(s, "sweep", "seed");
    if (!seed.is_number_unsigned()) f.bad("sweep.seed", "an integer >= 0");
    r.sweep->seed = seed.get<std::uint64_t>();
  }
  return r;
}

}  // namespace ropecheck::gate
