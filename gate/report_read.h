// A JSON report read back (gate/report_json.cpp to_json writes it): the Report and the judge's own
// result types it was written from, for `report merge` (gate/merge.h), which merges them with the
// judge's code and writes the merged report with to_json again.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "gate/report.h"

namespace ropecheck::gate {

// Every field to_json writes, read and checked: InputError "FILE: FIELD: expected WHAT" for the
// first that is missing or of another type or value. A metric written as "inf" or "nan" (JSON has
// neither), a plain number written as null (nlohmann's NaN), a hex float (reference/rounding.h
// to_hex) and an enum's name (judge::name) read back as the value written. What to_json leaves out
// keeps its default: the outcomes of passing tests and the reasons of failing ones, Case::suite
// (the group's), Case::severity, GroupResult::max_frequency, first_whole_test_failure,
// inputs_rounded, worst_e_pair, GroupDiagnosis::f32_angle_share, Report::worst_listed.
Report report_from_json(const std::string& file, const nlohmann::ordered_json& json);

}  // namespace ropecheck::gate
