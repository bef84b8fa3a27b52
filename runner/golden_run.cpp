#include "runner/golden_run.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "base/errors.h"
#include "base/parallel.h"
#include "golden/sidecar.h"
#include "judge/diagnosis.h"
#include "runner/failing_call.h"

namespace ropecheck::runner {
namespace {

// The first of `flags` that `test_flags` carries, or nullptr.
const std::string* skipped_flag(const std::vector<std::string>& test_flags, const std::vector<std::string>& flags) {
  for (const std::string& f : flags) {
    if (std::find(test_flags.begin(), test_flags.end(), f) != test_flags.end()) return &f;
  }
  return nullptr;
}

// An item of the golden loop: a group of a RoPE file, or a whole attention file.
struct Unit {
  std::size_t file = 0, group = 0;  // group: unused for an attention file
};

// The call a golden test makes: its inputs at its positions, with the expected values the file
// carries (judge/call.h).
judge::Call call_of(const golden::RopeTest& test) {
  return {test.id, test.tokens, test.heads, test.head_dim, test.positions, test.input, test.expected, test.expected_f32_recipe};
}
// The same from a copy of the test whose sidecar arrays were read into it (golden/golden.h
// load_arrays): its arrays moved, not copied.
judge::Call call_of(golden::RopeTest&& test) {
  judge::Call call;
  call.id = test.id;
  call.tokens = test.tokens;
  call.heads = test.heads;
  call.head_dim = test.head_dim;
  call.positions = std::move(test.positions);
  call.input = std::move(test.input);
  call.expected = std::move(test.expected);
  call.expected_f32_recipe = std::move(test.expected_f32_recipe);
  return call;
}

struct Pending {
  judge::Call call;
  ApplyResult result;
  judge::Expected expected;
  std::optional<std::pair<std::int64_t, ApplyResult>> first_failing;  // a failed call, bisected
};
struct GroupWork {
  std::unique_ptr<judge::GroupComparer> comparer;
  std::vector<Pending> pending;
  // Sidecar tests are diagnosed from a sample (a test of a big suite is millions of values).
  judge::DiagnosisSampler sidecar_sampler;
  judge::FailedCalls failed_calls;
  std::int64_t by_flags = 0, by_position = 0;
  std::vector<judge::GroupResult> results;  // one, or an attention file's groups
  std::vector<std::string> notes;
};

// The golden loop (judge_golden), step by step.
// One pipeline (base/parallel.h ordered_pipeline) over every group of every file, in three steps:
// a group's calls, on the calling thread in the order of the files, groups and tests (a failed call
// bisected right after the group's calls: the sequence a stateful implementation always saw); then
// its tests' exact values and judging, on any thread; then its result, in order. Groups are small
// (a few tests each): one group's exact values on every thread left threads idle at each group's
// end, and a pipeline per file at each file's end; several groups at once, across files, do not.
// A group with a sidecar (a big suite) judges each test as it is loaded, on every thread
// (GroupComparer::add_evaluated). An attention file is one item, all of it on the calling thread.
class GoldenRun {
 public:
  GoldenRun(const std::vector<LoadedGolden>& suites, const Implementation& implementation, const judge::Settings& settings,
            const ProgressFn& progress)
      : suites(suites), implementation(implementation), settings(settings), progress(progress), model(implementation.claims().model) {
    for (const LoadedGolden& g : suites) total += g.file.number_of_tests;
    for (std::size_t f = 0; f < suites.size(); ++f) {
      const golden::GoldenFile& file = suites[f].file;
      if (file.kind == golden::Kind::attention) {
        units.push_back({f, 0});
        continue;
      }
      for (std::size_t g = 0; g < file.groups.size(); ++g) units.push_back({f, g});
    }
    sidecars.reserve(suites.size());
    for (const LoadedGolden& loaded : suites) sidecars.emplace_back(loaded.file);
    small_group_threads = threads_per_item(settings.threads, units.size());
  }

  Judgement run() {
    // Suites without a sidecar hold their tests in memory already, and an item adds a group's outputs
    // and expected values: a window of 8 items per thread, so that the oldest unfinished group does
    // not hold the window while the other thread waits (bench/README.md
    // "Judging on two cores: golden window"). A group with a sidecar holds
    // a diagnosis sample of up to 24 MB: 2 per thread.
    const bool sidecars_loaded = std::any_of(suites.begin(), suites.end(), [](const LoadedGolden& g) { return !g.file.sidecar.empty(); });
    ordered_pipeline<GroupWork>(
        units.size(), settings.threads, [this](std::size_t u) { return start_unit(u); },
        [this](std::size_t u, GroupWork& work) { call_unit(u, work); }, [this](std::size_t u, GroupWork& work) { judge_unit(u, work); },
        [this](std::size_t, GroupWork&& work) { record_unit(std::move(work)); }, sidecars_loaded ? 2 : 8);
    return std::move(out);
  }

 private:
  void tick(const std::string& label) {
    ++done;
    if (progress) progress(done, total, label);
  }

  // A call that gave no output: its bisection to the first failing position (not for a skip).
  std::optional<std::pair<std::int64_t, ApplyResult>> bisect(const golden::Group& group, const judge::Call& call,
                                                             const ApplyResult& result) const {
    std::optional<std::pair<std::int64_t, ApplyResult>> first;
    if (result.status != ApplyResult::Status::unsupported && result.status != ApplyResult::Status::missing) {
      first = first_failing_call(implementation, group.spec, call, result);
    }
    return first;
  }

  // ...and what the group records of it: skipped (unsupported; missing under --allow-missing) or failed.
  void record_failure(GroupWork& work, const std::string& suite, const judge::Call& call, const ApplyResult& result,
                      const std::optional<std::pair<std::int64_t, ApplyResult>>& first) const {
    judge::GroupComparer& c = *work.comparer;
    if (first) work.failed_calls.offer(first->first, case_kind(first->second.status), first->second.message);
    switch (result.status) {
      case ApplyResult::Status::unsupported:
        c.skip(call.id, result.message);
        break;
      case ApplyResult::Status::missing:
        if (settings.allow_missing) {
          c.skip(call.id, result.message);
        } else {
          c.fail(call, judge::CaseKind::missing, result.message);
        }
        break;
      default:
        c.fail(call, case_kind(result.status), result.message + " (suite " + suite + ", test " + std::to_string(call.id) + ")");
    }
  }

  // An attention file, on the calling thread.
  void call_attention_file(const golden::GoldenFile& file, GroupWork& work) {
    const golden::AttentionTest* first = nullptr;
    for (const golden::Group& g : file.groups) {
      if (!g.attention_tests.empty() && !first) first = &g.attention_tests.front();
    }
    if (first && !implementation.attention(file.suite, *first)) {
      work.notes.push_back("suite " + file.suite + " (attention tests) is not run: the kernel ABI applies RoPE only");
      done += file.number_of_tests;
      return;
    }
    for (std::size_t gi = 0; gi < file.groups.size(); ++gi) call_attention_group(file, gi, work);
  }

  // Group `gi` of an attention file, on the calling thread.
  void call_attention_group(const golden::GoldenFile& file, std::size_t gi, GroupWork& work) {
    // H1 of the attention bounds holds q and k to the claim's default RoPE bound (judge/tolerance.cpp).
    const judge::Tolerance rope = judge::default_tolerance(model, file.groups[gi].spec, implementation.claims().theta_ulps);
    judge::AttentionComparer comparer(file.suite, static_cast<int>(gi), file.groups[gi], model, rope, settings);
    std::int64_t by_flags = 0;
    for (const golden::AttentionTest& test : file.groups[gi].attention_tests) {
      tick(file.suite);
      if (const std::string* flag = skipped_flag(test.flags, settings.skip_flags)) {
        comparer.skip(test, "flag " + *flag + " (--skip-flags)");
        ++by_flags;
        continue;
      }
      if (!judge::judges_exact_values(model)) {
        comparer.skip(test,
                      "attention tests carry the exact values: judged under --model exact or f32-angle, not " + std::string(name(model)));
        continue;
      }
      const std::optional<AttentionAnswer> answer = implementation.attention(file.suite, test);
      const std::string scores = tensor_name(file.suite, test.id, "scores");
      const std::string outputs = tensor_name(file.suite, test.id, "outputs");
      if (!answer || (!answer->scores && !answer->outputs)) {
        const std::string why = "no tensor " + scores + " nor " + outputs + " in " + implementation.name();
        if (settings.allow_missing) {
          comparer.skip(test, why);
        } else {
          comparer.fail(test, judge::CaseKind::missing, why);
        }
        continue;
      }
      std::vector<std::string> missing;
      if (!settings.allow_missing) {
        if (!answer->scores) missing.push_back("no tensor " + scores + " in " + implementation.name());
        if (!answer->outputs) missing.push_back("no tensor " + outputs + " in " + implementation.name());
      }
      comparer.add(test, answer->scores, answer->outputs, missing);
    }
    judge::GroupResult result = comparer.finish();
    result.skipped_by_flags = by_flags;
    work.by_flags += by_flags;
    work.results.push_back(std::move(result));
  }

  GroupWork start_unit(std::size_t u) const {
    GroupWork work;
    const golden::GoldenFile& file = suites[units[u].file].file;
    if (file.kind == golden::Kind::attention) return work;
    const golden::Group& group = file.groups[units[u].group];
    work.comparer = std::make_unique<judge::GroupComparer>(file.suite, static_cast<int>(units[u].group), group.spec, model,
                                                           implementation.tolerance(group.spec), settings);
    return work;
  }

  void call_unit(std::size_t u, GroupWork& work) {
    const std::optional<std::int64_t>& max_position = settings.max_position;
    const golden::GoldenFile& file = suites[units[u].file].file;
    if (file.kind == golden::Kind::attention) {
      call_attention_file(file, work);
      return;
    }
    const golden::Group& group = file.groups[units[u].group];
    judge::GroupComparer& comparer = *work.comparer;
    // A sidecar test is judged on every thread while the calling thread loads and runs the next
    // one (the reading was a fifth of a big check's time with every other thread idle); the
    // comparer and the sample see the tests in order: each step that changes them waits for the
    // test in flight first (settle). One thread: no overlap.
    struct InFlight {
      judge::Call call;
      ApplyResult result;
      std::future<void> judged;  // on another thread (overlap); last: destroyed (waited for) before what it reads
    };
    std::optional<InFlight> in_flight;
    judge::Call spare;  // a judged test's input and expected arrays, read into again by the next load
    const auto settle = [&] {
      if (!in_flight) return;
      if (in_flight->judged.valid()) in_flight->judged.get();
      if (in_flight->result.output.size() == in_flight->call.input.size()) {  // a wrong-sized output is the comparer's failure
        work.sidecar_sampler.offer(in_flight->call, in_flight->result.output, position_components(group.spec), comparer.worst_e());
      }
      spare.input = std::move(in_flight->call.input);
      spare.expected = std::move(in_flight->call.expected);
      in_flight.reset();
    };
    const bool overlap = resolve_threads(settings.threads) > 1;
    for (const golden::RopeTest& test : group.rope_tests) {
      tick(file.suite);
      if (const std::string* flag = skipped_flag(test.flags, settings.skip_flags)) {
        settle();
        comparer.skip(test.id, "flag " + *flag + " (--skip-flags)");
        ++work.by_flags;
        continue;
      }
      if (max_position) {
        bool any = false;
        for (std::int64_t t = 0; t < test.tokens && !any; ++t) any = judge::token_position(test.positions, group.spec, t) <= *max_position;
        if (!any) {
          settle();
          comparer.skip(test.id, "every position above --max-position " + std::to_string(*max_position));
          ++work.by_position;
          continue;
        }
      }
      if (test.sidecar) {
        // A sidecar test (a big suite): loaded, run, judged and dropped on its own, its exact values
        // computed chunk by chunk on every thread, so that the loop holds one test (golden/golden.h
        // load_arrays, GroupComparer::add_evaluated).
        golden::RopeTest loaded = test;
        loaded.input = std::move(spare.input);
        loaded.expected = std::move(spare.expected);
        sidecars[units[u].file].load(group.spec, loaded);
        judge::Call call = call_of(std::move(loaded));
        const Shape shape{call.tokens, call.heads, call.head_dim};
        ApplyResult result = implementation.run(group.spec, shape, call.positions, call.input);
        if (result.status != ApplyResult::Status::ok) {
          std::optional<std::pair<std::int64_t, ApplyResult>> first = bisect(group, call, result);
          settle();
          record_failure(work, file.suite, call, result, first);
          continue;
        }
        settle();
        // The exact models judge against the file's correctly rounded values (call.expected).
        in_flight.emplace(InFlight{std::move(call), std::move(result), {}});
        InFlight& judging = *in_flight;
        const auto judge_it = [&comparer, &judging, threads = settings.threads] {
          comparer.add_evaluated(judging.call, judging.result.output, threads);
        };
        if (overlap) {
          judging.judged = std::async(std::launch::async, judge_it);
        } else {
          judge_it();
        }
        continue;
      }
      settle();
      judge::Call call = call_of(test);
      ApplyResult result = implementation.run(group.spec, Shape{call.tokens, call.heads, call.head_dim}, call.positions, call.input);
      work.pending.push_back({std::move(call), std::move(result), {}, std::nullopt});
    }
    settle();
    for (Pending& p : work.pending) {
      if (p.result.status != ApplyResult::Status::ok) p.first_failing = bisect(group, p.call, p.result);
    }
  }

  void judge_unit(std::size_t u, GroupWork& work) const {
    const golden::GoldenFile& file = suites[units[u].file].file;
    if (file.kind == golden::Kind::attention) return;
    const golden::Group& group = file.groups[units[u].group];
    const int group_threads = file.sidecar.empty() ? small_group_threads : settings.threads;
    judge::GroupComparer& comparer = *work.comparer;
    // The exact values do not depend on the candidate: computed for every test at once, in parallel.
    parallel_for(work.pending.size(), group_threads, [&](std::size_t i) {
      if (work.pending[i].result.status == ApplyResult::Status::ok) {
        work.pending[i].expected = judge::expected_values(group.spec, work.pending[i].call, model, settings.precision_bits);
      }
    });
    for (Pending& p : work.pending) {
      if (p.result.status == ApplyResult::Status::ok) {
        comparer.add(p.call, p.result.output, p.expected);
      } else {
        record_failure(work, file.suite, p.call, p.result, p.first_failing);
      }
      p.expected = {};
    }
    judge::GroupResult result = comparer.finish();
    if (judge::needs_diagnosis(result)) {
      std::vector<judge::DiagnosedTest> judged;
      // The worst sidecar test alone (golden tests are separate calls: a mistake in some of them
      // is named from where it is; a direct check's chunks, one tensor, add the spread sample).
      if (const judge::DiagnosisSample* sample = work.sidecar_sampler.sample()) judged.push_back(sample->diagnosed());
      for (const Pending& p : work.pending) {
        if (p.result.status == ApplyResult::Status::ok && p.result.output.size() == p.call.input.size()) {
          judged.push_back({.test = &p.call, .output = p.result.output});
        }
      }
      std::vector<judge::TrimmedTest> trimmed;  // what `judged` points into once trimmed
      judged = judge::within_max_position(judged, group.spec, settings.max_position, trimmed);
      if (!judged.empty()) result.diagnosis = judge::diagnose(group.spec, judged, model, result.verdict == judge::Verdict::fail, group_threads, &result);
    }
    work.failed_calls.explain(result);
    result.skipped_by_flags = work.by_flags;
    result.skipped_by_position += work.by_position;
    work.results.push_back(std::move(result));
    work.pending.clear();
    work.comparer.reset();
  }

  void record_unit(GroupWork&& work) {
    for (std::string& note : work.notes) out.notes.push_back(std::move(note));
    out.skipped_by_flags += work.by_flags;
    for (judge::GroupResult& result : work.results) {
      out.skipped_by_position += result.skipped_by_position;
      out.groups.push_back(std::move(result));
    }
  }

  const std::vector<LoadedGolden>& suites;
  const Implementation& implementation;
  const judge::Settings& settings;
  const ProgressFn& progress;
  const judge::Model model;
  Judgement out;
  std::int64_t total = 0, done = 0;
  std::vector<Unit> units;
  std::vector<golden::SidecarLoader> sidecars;  // each file's sidecar header read once for all its tests
  int small_group_threads = 1;  // a small group's own work on its share of the threads; a sidecar group's tests each on all of them
};

}  // namespace

std::string tensor_name(const std::string& suite, std::int64_t test_id, const char* what) {
  return suite + "/" + std::to_string(test_id) + "/" + what;
}

std::vector<LoadedGolden> load_golden(const std::string& file_or_folder, int threads) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> paths;
  if (fs::is_directory(file_or_folder, ec)) {
    for (const auto& entry : fs::directory_iterator(file_or_folder, ec)) {
      std::error_code kind;  // a symbolic-link loop or an unreadable entry is no suite (not an exception)
      if (entry.is_regular_file(kind) && entry.path().extension() == ".json") paths.push_back(entry.path().string());
    }
    if (ec) throw UsageError("--golden: expected a readable folder, got " + file_or_folder + " (" + ec.message() + ")");
    std::sort(paths.begin(), paths.end());
    if (paths.empty()) throw UsageError("--golden: expected *.json suite files in folder " + file_or_folder + ", found none");
  } else if (fs::is_regular_file(file_or_folder, ec)) {
    paths.push_back(file_or_folder);
  } else {
    throw UsageError("--golden: expected an existing golden file or folder, got '" + file_or_folder + "'");
  }
  // The files read and parsed on every thread (a folder of suites is many files of JSON); a file's
  // error is the error of the first such file in path order, whatever the thread count.
  std::vector<LoadedGolden> out(paths.size());
  std::vector<std::exception_ptr> errors(paths.size());
  parallel_for(paths.size(), threads, [&](std::size_t i) {
    try {
      out[i] = {paths[i], golden::read_golden_file(paths[i])};
    } catch (...) {
      errors[i] = std::current_exception();
    }
  });
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::string& path = paths[i];
    // Candidates are keyed by suite and test id, so an id must name one test (golden lint reports
    // the same; reading refuses, so that a check never silently judges two tests as one).
    std::map<std::int64_t, std::string> seen;
    const golden::GoldenFile& file = out[i].file;
    for (std::size_t g = 0; g < file.groups.size(); ++g) {
      auto check = [&](std::int64_t id, std::size_t t) {
        const std::string where = "groups[" + std::to_string(g) + "].tests[" + std::to_string(t) + "].id";
        const auto [it, fresh] = seen.emplace(id, where);
        if (!fresh) {
          throw InputError(path + ": " + where + ": expected a unique test id, got " + std::to_string(id) + " (also at " + it->second +
                           ")");
        }
      };
      for (std::size_t t = 0; t < file.groups[g].rope_tests.size(); ++t) check(file.groups[g].rope_tests[t].id, t);
      for (std::size_t t = 0; t < file.groups[g].attention_tests.size(); ++t) check(file.groups[g].attention_tests[t].id, t);
    }
  }
  return out;
}

void check_skip_flags(const std::vector<std::string>& flags, const std::vector<LoadedGolden>& suites) {
  std::set<std::string> known;
  for (const LoadedGolden& s : suites) {
    for (const auto& note : s.file.notes) known.insert(note.first);
    for (const golden::Group& g : s.file.groups) {
      for (const golden::RopeTest& t : g.rope_tests) known.insert(t.flags.begin(), t.flags.end());
      for (const golden::AttentionTest& t : g.attention_tests) known.insert(t.flags.begin(), t.flags.end());
    }
  }
  for (const std::string& f : flags) {
    if (known.count(f)) continue;
    std::string names;
    for (const std::string& k : known) names += (names.empty() ? "" : ", ") + k;
    throw UsageError("--skip-flags: expected flags the suites use (" + names + "), got '" + f + "'");
  }
}

Judgement judge_golden(const std::vector<LoadedGolden>& suites, const Implementation& implementation, const judge::Settings& settings,
                       const ProgressFn& progress) {
  return GoldenRun(suites, implementation, settings, progress).run();
}

}  // namespace ropecheck::runner
