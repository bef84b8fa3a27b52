// Shared by the gate's end-to-end tests: a small golden file built in the test (expected values
// from the exact reference, never from the gate), a temporary folder, and running the CLI.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "golden/golden.h"
#include "judge/tolerance.h"
#include "tensorio/readers.h"
#include "tensorio/writers.h"
#include "reference/rope.h"
#include "reference/rounding.h"

namespace ropecheck::gate {
// The judge's and the tensor files' names, as the gate's tests use them.
using judge::default_tolerance;
using judge::kDefaultThetaUlps;
using judge::Model;
using judge::Tolerance;
using namespace tensorio;  // NOLINT: readers and writers build and read the tests' files
}  // namespace ropecheck::gate

namespace ropecheck::gate::testing {

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void spit(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A fresh folder under $TMPDIR, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ropecheck-gate-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    if (std::getenv("ROPECHECK_KEEP_TEST_FILES")) return;  // for debugging a failure
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct Ran {
  int code = -1;
  std::string out, err;
};

// Runs `command` through /bin/sh, capturing stdout and stderr into files of `dir`.
inline Ran run(const std::string& command, const TempDir& dir) {
  const std::string out = dir / "stdout.txt", err = dir / "stderr.txt";
  const int status = std::system((command + " >" + out + " 2>" + err).c_str());
  Ran r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// Reads a JUnit or XHTML report back with Python's XML parser (and, for a page, its HTML parser
// too), so a report that is not well-formed fails the calling test; returns what the tests look at:
// the root's attributes, the JUnit testsuites and testcases, the page's title, table rows (cell
// text, colspan, and the title attributes inside the cell: a value's hex float and bits) and
// paragraphs (text, and each span's class and text).
inline nlohmann::json read_xml_report(const TempDir& dir, const std::string& path) {
  const std::string script =
      "import sys, json, html.parser, xml.etree.ElementTree as E\n"
      "t = open(sys.argv[1], encoding='utf-8').read()\n"
      "if t.startswith('<!DOCTYPE'): html.parser.HTMLParser().feed(t)\n"
      "r = E.fromstring(t)\n"
      "text = lambda e: ''.join(e.itertext())\n"
      "def case(c):\n"
      "    f, s = c.find('failure'), c.find('skipped')\n"
      "    return {'classname': c.get('classname'), 'name': c.get('name'),\n"
      "            'failure': None if f is None else {'type': f.get('type'), 'message': f.get('message'), 'text': f.text or ''},\n"
      "            'skipped': None if s is None else s.get('message')}\n"
      "title = r.find('.//{*}title')\n"
      "print(json.dumps({'root': dict(r.attrib), 'suites': [dict(s.attrib) for s in r.findall('.//{*}testsuite')],\n"
      "    'testcases': [case(c) for c in r.findall('.//{*}testcase')],\n"
      "    'title': None if title is None else text(title),\n"
      "    'rows': [[{'text': text(d), 'colspan': d.get('colspan'), 'titles': [e.get('title') for e in d.iter() if e.get('title')]}\n"
      "              for d in tr.findall('{*}td')] for tr in r.findall('.//{*}tr')],\n"
      "    'paragraphs': [{'text': text(p), 'spans': [[s.get('class'), text(s)] for s in p.findall('{*}span')]}\n"
      "                   for p in r.findall('.//{*}p')]}))\n";
  spit(dir / "read_report.py", script);
  const Ran r = run("/usr/bin/python3 " + (dir / "read_report.py") + " " + path, dir);
  EXPECT_EQ(r.code, 0) << path << " is not well-formed: " << r.err << "\n" << slurp(path);
  return r.code == 0 ? nlohmann::json::parse(r.out)
                     : nlohmann::json::object({{"root", nlohmann::json::object()}, {"suites", nlohmann::json::array()},
                                               {"testcases", nlohmann::json::array()}, {"title", ""},
                                               {"rows", nlohmann::json::array()}, {"paragraphs", nlohmann::json::array()}});
}

// The HTML report's message-only rows: a worst case with no pair to show (a missing tensor, a
// crash) is one row of 7 cells whose last, the message, spans the 5 value columns.
inline std::vector<nlohmann::json> message_rows(const nlohmann::json& page) {
  std::vector<nlohmann::json> out;
  for (const auto& row : page["rows"]) {
    if (row.size() == 7 && row[6]["colspan"] == "5") out.push_back(row);
  }
  return out;
}

#ifdef PLUGIN_DIR
// The test plugin built for `variant` (tests/gate/CMakeLists.txt: good, segv, abort, hang, abi, guard).
inline std::string plugin(const std::string& variant) {
  return std::string(PLUGIN_DIR) + "/libgate_plugin_" + variant + ".so";
}
#endif

// Positions of the tests of the small golden file, one test each (ids 1..7): 0 (identity), 1, 7 (the
// plugins' misbehaviour trigger), 100, 2^16, 2^24 + 1 (not a float32 value), 2^31 − 1.
inline const std::vector<std::int64_t>& test_positions() {
  static const std::vector<std::int64_t> p{0, 1, 7, 100, 65536, (1 << 24) + 1, 2147483647};
  return p;
}

// One group: interleaved, head_dim 8, rotary_dim 6 (dims 6, 7 pass through), base 10000, f32;
// 1 token × 2 heads per test, inputs from a fixed LCG rounded to float32.
inline golden::GoldenFile small_golden(const std::string& spec_text =
                                           "layout=interleaved,head_dim=8,rotary_dim=6,base=10000,dtype=f32") {
  golden::GoldenFile file;
  file.suite = "gate-small";
  file.description = "The gate's end-to-end tests";
  golden::Group group;
  group.spec = parse_spec(spec_text);
  std::uint64_t state = 12345;
  std::int64_t id = 0;
  for (std::int64_t position : test_positions()) {
    golden::RopeTest t;
    t.id = ++id;
    t.comment = "position " + std::to_string(position);
    t.positions = {position};
    t.tokens = 1;
    t.heads = 2;
    t.head_dim = group.spec.head_dim;
    for (std::int64_t i = 0; i < t.heads * t.head_dim; ++i) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      const double unit = static_cast<double>(state >> 11) / 9007199254740992.0;  // [0, 1)
      t.input.push_back(reference::round_to_format(2 * unit - 1, group.spec.dtype));
    }
    const reference::Shape shape{t.tokens, t.heads, t.head_dim};
    t.expected = reference::apply(group.spec, shape, t.positions, t.input);
    reference::Options recipe;
    recipe.model = reference::Model::f32_recipe;
    t.expected_f32_recipe = reference::apply(group.spec, shape, t.positions, t.input, recipe);
    group.rope_tests.push_back(std::move(t));
  }
  file.groups.push_back(std::move(group));
  file.number_of_tests = id;
  return file;
}

inline std::set<std::int64_t> failed_tests(const nlohmann::json& report) {
  std::set<std::int64_t> ids;
  for (const auto& g : report["groups"]) {
    for (const auto& id : g["failed_tests"]) ids.insert(id.get<std::int64_t>());
  }
  return ids;
}

inline std::set<std::int64_t> ids_where(bool (*predicate)(std::int64_t position)) {
  std::set<std::int64_t> ids;
  for (std::size_t i = 0; i < test_positions().size(); ++i) {
    if (predicate(test_positions()[i])) ids.insert(static_cast<std::int64_t>(i + 1));
  }
  return ids;
}

}  // namespace ropecheck::gate::testing
