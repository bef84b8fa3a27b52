#include "fuzz/search/search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <ropecheck/kernel.h>

#include "fuzz/search/generators.h"
#include "judge/pair_rule.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "spec/schedule.h"

namespace ropecheck::fuzz {
namespace {

using reference::to_hex;

// Working precision of the exact values: reference/rope.h bounds rotate_exact's error by about
// 2^(14−P)·|φ|·ρ; with P = 128 and |φ| ≤ 2^31·θ ≤ 2^35 that is 2^-79·ρ, below 2^-55·u·ρ for f64.
constexpr int kExactBits = 128;
constexpr int kStartCases = 16;
constexpr int kClimbRounds = 24;
constexpr int kMutantsPerRound = 8;
constexpr int kShrinkEvaluations = 400;

// Every evaluated case is one token of head_dim values, each an exact rotation at kExactBits and a
// correctly rounded one: the cost of a trial is proportional to head_dim × cases. A trial of the
// full 16 + 24·8 = 208 cases at head_dim 65536 took about 45 s, so `--seconds` (checked between
// trials) was overrun by a whole trial (16 cases at head_dim 65536 took 20 s on a loaded machine).
// At most kTrialValues values per trial (at least one case): up to 16 start cases, then as many
// climb rounds as fit (all 24 up to head_dim 1024; 4 start cases and no climb at 65536).
constexpr std::int64_t kTrialValues = std::int64_t{1} << 18;
// Shrinking a violation evaluates one case at a time, at most kShrinkValues values each finding
// (all 400 evaluations up to head_dim 655, 4 at 65536).
constexpr std::int64_t kShrinkValues = std::int64_t{1} << 18;

int start_cases(const Spec& spec) {
  return static_cast<int>(std::clamp<std::int64_t>(kTrialValues / spec.head_dim, 1, kStartCases));
}

int climb_rounds(const Spec& spec) {
  const std::int64_t cases = kTrialValues / spec.head_dim - start_cases(spec);
  return static_cast<int>(std::clamp<std::int64_t>(cases / kMutantsPerRound, 0, kClimbRounds));
}

int shrink_evaluations(const Spec& spec) {
  return static_cast<int>(std::clamp<std::int64_t>(kShrinkValues / spec.head_dim, 1, kShrinkEvaluations));
}

std::string pair_text(double a, double b) { return "(" + to_hex(a) + ", " + to_hex(b) + ")"; }

}  // namespace

std::string_view name(Violation v) {
  switch (v) {
    case Violation::none: return "none";
    case Violation::status: return "status";
    case Violation::passthrough: return "passthrough";
    case Violation::special_value: return "special_value";
    case Violation::signed_zero: return "signed_zero";
    case Violation::tolerance: return "tolerance";
    case Violation::underflow: return "underflow";
  }
  return "none";
}

std::string case_text(const FuzzCase& c) {
  std::string position;
  for (std::size_t k = 0; k < c.position.size(); ++k) position += (k ? ":" : "") + std::to_string(c.position[k]);
  return "position=" + position + ";pair=" + std::to_string(c.pair) + ";x=" + to_hex(c.x) + ";y=" + to_hex(c.y) +
         ";background=" + std::to_string(c.background);
}

FuzzCase parse_case(const std::string& text, const Spec& spec) {
  FuzzCase c;
  bool seen[5] = {};
  std::istringstream in(text);
  std::string item;
  auto integer = [](const std::string& field, const std::string& value) {
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != value.size()) {
      throw std::invalid_argument("--replay: " + field + ": expected an integer, got '" + value + "'");
    }
    return static_cast<std::int64_t>(v);
  };
  while (std::getline(in, item, ';')) {
    const auto eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (key == "position") {
      std::istringstream parts(value);
      std::string part;
      while (std::getline(parts, part, ':')) c.position.push_back(integer("position", part));
      seen[0] = true;
    } else if (key == "pair") {
      c.pair = static_cast<int>(integer("pair", value));
      seen[1] = true;
    } else if (key == "x" || key == "y") {
      double v = 0;
      try {
        v = reference::parse_float(value);
      } catch (const std::invalid_argument&) {
        throw std::invalid_argument("--replay: " + key + ": expected a hex float, got '" + value + "'");
      }
      if (!reference::representable(v, input_dtype_of(spec))) {
        throw std::invalid_argument("--replay: " + key + ": expected a value of " + std::string(name(input_dtype_of(spec))) +
                                    ", got " + value);
      }
      (key == "x" ? c.x : c.y) = v;
      seen[key == "x" ? 2 : 3] = true;
    } else if (key == "background") {
      std::size_t used = 0;
      unsigned long long bits = 0;
      try {
        bits = value.empty() || value[0] == '-' ? 0 : std::stoull(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != value.size()) {
        throw std::invalid_argument("--replay: background: expected an unsigned 64-bit integer, got '" + value + "'");
      }
      c.background = bits;
      seen[4] = true;
    } else {
      throw std::invalid_argument("--replay: expected position=, pair=, x=, y=, background= fields separated by ';', got '" +
                                  item + "'");
    }
  }
  for (bool s : seen) {
    if (!s) throw std::invalid_argument("--replay: expected all of position=, pair=, x=, y=, background=, got '" + text + "'");
  }
  if (static_cast<int>(c.position.size()) != position_components(spec)) {
    throw std::invalid_argument("--replay: position: expected " + std::to_string(position_components(spec)) +
                                " ':'-separated component(s) for this spec, got " + std::to_string(c.position.size()));
  }
  if (c.pair < 0 || c.pair >= spec.rotary_dim / 2) {
    throw std::invalid_argument("--replay: pair: expected 0 <= pair < rotary_dim/2 = " +
                                std::to_string(spec.rotary_dim / 2) + ", got " + std::to_string(c.pair));
  }
  return c;
}

std::vector<Outcome> evaluate(const runner::Implementation& implementation, const Spec& spec, const judge::Tolerance& tolerance,
                              const std::vector<FuzzCase>& cases, bool strict_zeros) {
  const std::size_t n = cases.size();
  const std::size_t d = static_cast<std::size_t>(spec.head_dim);
  const int components = position_components(spec);
  std::vector<double> input;
  std::vector<std::int64_t> positions;
  for (const FuzzCase& c : cases) {
    const std::vector<double> head = head_input(spec, c);
    input.insert(input.end(), head.begin(), head.end());
    positions.insert(positions.end(), c.position.begin(), c.position.end());
  }
  const reference::Shape shape{static_cast<std::int64_t>(n), 1, spec.head_dim};
  std::vector<Outcome> outcomes(n);
  const runner::ApplyResult result = implementation.run(spec, shape, positions, input);
  if (result.status == runner::ApplyResult::Status::unsupported) {
    for (Outcome& o : outcomes) o.unsupported = true;
    return outcomes;
  }
  if (result.status != runner::ApplyResult::Status::ok || result.output.size() != n * d) {
    if (n > 1) {  // attribute the failure to its cases
      for (std::size_t i = 0; i < n; ++i) outcomes[i] = evaluate(implementation, spec, tolerance, {cases[i]}, strict_zeros)[0];
      return outcomes;
    }
    outcomes[0].violation = Violation::status;
    outcomes[0].message = result.status != runner::ApplyResult::Status::ok
                              ? std::string(runner::kind_name(result.status)) + ": " + result.message
                              : "expected " + std::to_string(d) + " outputs, got " + std::to_string(result.output.size());
    return outcomes;
  }

  // The exact values (non-finite inputs replaced by zeros: those pairs are judged by class) and the
  // correctly rounded ones under the IEEE policy of reference/README.md.
  std::vector<double> finite_input = input;
  for (double& v : finite_input) {
    if (!std::isfinite(v)) v = 0;
  }
  const std::vector<reference::Real> exact_real =
      reference::rotate_exact(spec, shape, positions, finite_input, kExactBits, reference::Form::elementwise);
  std::vector<long double> exact(exact_real.size());
  for (std::size_t i = 0; i < exact.size(); ++i) exact[i] = static_cast<long double>(exact_real[i]);
  const std::vector<double> rounded = reference::apply(spec, shape, positions, input);

  // THE pair rule (judge/pair_rule.h), as check and run apply it.
  judge::PairRule rule;
  rule.dtype = spec.dtype;
  rule.attention_factor = attention_factor<double>(spec);
  rule.tolerance = tolerance;
  rule.underflow_roundings = judge::underflow_roundings(implementation.claims().model);
  rule.strict_zeros = strict_zeros;
  const int pairs = spec.rotary_dim / 2;
  std::vector<long double> theta;
  if (tolerance.per_radian != 0) {
    for (int j = 0; j < pairs; ++j) theta.push_back(frequency<long double>(spec, j));
  }

  for (std::size_t i = 0; i < n; ++i) {
    Outcome& outcome = outcomes[i];
    const double* in = &input[i * d];
    const double* got = &result.output[i * d];
    auto consider = [&](Violation v, int pair, double x, double y, double a, double b, double ea, double eb,
                        std::string message) {
      if (outcome.violation != Violation::none && outcome.violation <= v) return;
      outcome.violation = v;
      outcome.worst_pair = pair;
      outcome.x = x, outcome.y = y, outcome.got_a = a, outcome.got_b = b, outcome.expected_a = ea, outcome.expected_b = eb;
      outcome.message = std::move(message);
    };
    for (std::size_t k = static_cast<std::size_t>(spec.rotary_dim); k < d; ++k) {
      if (!judge::passthrough_matches(got[k], in[k], spec.dtype, strict_zeros)) {
        consider(Violation::passthrough, -1, in[k], 0, got[k], 0, in[k], 0,
                 "pass-through dim " + std::to_string(k) + ": expected " + to_hex(in[k]) + " bit for bit, got " + to_hex(got[k]));
        break;
      }
    }
    bool judged_any = false;
    for (int j = 0; j < pairs; ++j) {
      const reference::PairDims dims = reference::pair_dims(spec, j);
      judge::Pair pair;
      pair.x = in[dims.first];
      pair.y = in[dims.second];
      pair.a = got[dims.first];
      pair.b = got[dims.second];
      pair.exact_a = exact[i * d + static_cast<std::size_t>(dims.first)];
      pair.exact_b = exact[i * d + static_cast<std::size_t>(dims.second)];
      pair.rounded_a = rounded[i * d + static_cast<std::size_t>(dims.first)];
      pair.rounded_b = rounded[i * d + static_cast<std::size_t>(dims.second)];
      if (!theta.empty()) {
        const std::int64_t m = positions[i * static_cast<std::size_t>(components) + static_cast<std::size_t>(position_component(spec, j))];
        pair.angle = static_cast<double>(std::fabs(static_cast<long double>(m) * theta[static_cast<std::size_t>(j)]));
      }
      const judge::PairVerdict v = judge::judge_pair(pair, rule);
      const std::string where = "pair " + std::to_string(j) + " input " + pair_text(pair.x, pair.y) + ": ";
      if (!v.pass()) {
        const Violation violation = v.failure == judge::Failure::tolerance
                                        ? (v.domain == judge::Domain::subnormal ? Violation::underflow : Violation::tolerance)
                                    : v.failure == judge::Failure::signed_zero ? Violation::signed_zero
                                                                               : Violation::special_value;
        consider(violation, j, pair.x, pair.y, pair.a, pair.b, pair.rounded_a, pair.rounded_b, where + v.message);
      }
      // The hill climb ranks cases by e over the ordinary pairs (judge/pair_rule.h Domain).
      if (!v.ordinary() || !v.measured) continue;
      if (judged_any && v.e <= outcome.e) continue;
      judged_any = true;
      outcome.e = v.e;
      outcome.bound = tolerance.at(pair.angle);
      // The reported pair: the worst-e one, unless a violation holds the slot.
      if (outcome.violation != Violation::none) continue;
      outcome.worst_pair = j;
      outcome.x = pair.x, outcome.y = pair.y, outcome.got_a = pair.a, outcome.got_b = pair.b;
      outcome.expected_a = pair.rounded_a, outcome.expected_b = pair.rounded_b;
    }
  }
  return outcomes;
}

FuzzCase shrink(const runner::Implementation& candidate, const Spec& spec, const judge::Tolerance& tolerance, FuzzCase c,
                Violation violation, bool strict_zeros) {
  int budget = shrink_evaluations(spec);
  auto still = [&](const FuzzCase& trial) {
    if (budget <= 0) return false;
    --budget;
    return evaluate(candidate, spec, tolerance, {trial}, strict_zeros)[0].violation == violation;
  };
  auto simpler_values = [&](double v) {
    std::vector<double> out;
    if (!std::isfinite(v) || v == 0) return out;
    out.push_back(0.0);
    out.push_back(std::copysign(1.0, v));
    int exponent = 0;
    const double m = std::frexp(v, &exponent);
    out.push_back(std::ldexp(std::copysign(0.5, m), exponent));  // one significant bit
    for (int bits : {2, 4, 8, 16, 32}) {
      const double kept = std::ldexp(std::trunc(std::ldexp(m, bits)), exponent - bits);
      if (kept != v) out.push_back(kept);
    }
    return out;
  };
  // A breach in a background pair: refocus the case on that pair, with its own inputs and no
  // background, so that the printed case names the pair that actually breaches.
  if (c.background != 0) {
    const Outcome first = evaluate(candidate, spec, tolerance, {c}, strict_zeros)[0];
    if (first.worst_pair >= 0 && first.worst_pair != c.pair) {
      FuzzCase focused = c;
      focused.pair = first.worst_pair;
      focused.x = first.x;
      focused.y = first.y;
      focused.background = 0;
      if (still(focused)) c = focused;
    }
  }
  bool changed = true;
  while (changed && budget > 0) {
    changed = false;
    auto attempt = [&](FuzzCase trial) {
      if (!changed && trial != c && still(trial)) {
        c = trial;
        changed = true;
      }
    };
    if (c.background != 0) {
      FuzzCase t = c;
      t.background = 0;
      attempt(t);
    }
    for (int pair : {0, c.pair / 2, c.pair - 1}) {
      if (pair >= 0 && pair < c.pair) {
        FuzzCase t = c;
        t.pair = pair;
        attempt(t);
      }
    }
    for (std::size_t k = 0; k < c.position.size(); ++k) {
      const std::int64_t p = c.position[k];
      for (std::int64_t smaller : {std::int64_t{0}, std::int64_t{1}, p / 2, p - p / 4, p & (p - 1), p - 1}) {
        if (smaller >= 0 && smaller < p) {
          FuzzCase t = c;
          t.position[k] = smaller;
          attempt(t);
        }
      }
    }
    for (double FuzzCase::*field : {&FuzzCase::x, &FuzzCase::y}) {
      for (double v : simpler_values(c.*field)) {
        FuzzCase t = c;
        t.*field = reference::round_to_format(v, input_dtype_of(spec));
        attempt(t);
      }
    }
  }
  return c;
}

std::vector<Spec> default_specs() {
  auto factors = [](int count, const char* first, const char* step) {
    std::string out;
    for (int i = 0; i < count; ++i) {
      const double v = std::strtod(first, nullptr) + i * std::strtod(step, nullptr);
      std::ostringstream s;
      s << v;
      out += (i ? "/" : "") + s.str();
    }
    return out;
  };
  const std::string short_factor = factors(8, "1", "0.125");
  const std::string long_factor = factors(8, "1", "0.5");
  const std::string longrope = "layout=half,head_dim=16,base=10000,dtype=f32,scaling=longrope,short_factor=" +
                               short_factor + ",long_factor=" + long_factor + ",factor=8,original_max_position=4096";
  const std::vector<std::string> texts = {
      "layout=interleaved,head_dim=64,base=10000,dtype=f32",
      "layout=half,head_dim=128,base=500000,dtype=f32",
      "layout=half,head_dim=128,base=10000,dtype=bf16",
      "layout=interleaved,head_dim=64,base=10000,dtype=f16",
      "layout=half,head_dim=64,base=1000000,dtype=f64",
      "layout=interleaved,head_dim=2,base=2,dtype=f32",
      "layout=half,head_dim=512,rotary_dim=2,base=1000000000,dtype=f16",
      "layout=half,head_dim=512,base=1000000000,dtype=f32",
      "layout=interleaved,head_dim=96,rotary_dim=32,base=10000,dtype=f16,direction=inverse",
      "layout=half,head_dim=128,base=10000,dtype=f32,scaling=linear,factor=4",
      "layout=half,head_dim=128,base=10000,dtype=f32,scaling=ntk,factor=8",
      "layout=half,head_dim=128,base=10000,dtype=f32,scaling=dynamic,factor=2,original_max_position=4096,seq_len=4096",
      "layout=half,head_dim=128,base=10000,dtype=f32,scaling=dynamic,factor=2,original_max_position=4096,seq_len=4097",
      "layout=half,head_dim=128,base=10000,dtype=f32,scaling=yarn,factor=4,original_max_position=4096",
      "layout=half,head_dim=128,base=1000000,dtype=bf16,scaling=yarn,factor=4,original_max_position=32768,truncate=false,"
      "mscale=1,mscale_all_dim=0.5",
      "layout=half,head_dim=128,base=10000,dtype=f32,scaling=yarn-ggml,freq_scale=0.25,original_max_position=4096,ext_factor=1",
      "layout=half,head_dim=128,base=500000,dtype=f32,scaling=llama3",
      "layout=half,head_dim=128,base=500000,dtype=f16,scaling=llama3",
      longrope + ",seq_len=4096",
      longrope + ",seq_len=4097",
      "layout=interleaved,head_dim=16,base=10000,dtype=f32,axes=2d",
      "layout=half,head_dim=128,base=1000000,dtype=bf16,axes=mrope,sections=16/24/24",
      "layout=half,head_dim=128,base=5000000,dtype=f32,axes=imrope,sections=24/20/20/0",
  };
  std::vector<Spec> specs;
  for (const std::string& text : texts) specs.push_back(parse_spec(text));
  return specs;
}

std::string replay_command(const runner::Implementation& candidate, const Spec& spec, const FuzzCase& c, bool strict_zeros) {
  auto quote = [](const std::string& s) {
    std::string out = "'";
    for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return out + "'";
  };
  std::string selector = candidate.selector();
  const auto space = selector.find(' ');
  if (space != std::string::npos) selector = selector.substr(0, space + 1) + quote(selector.substr(space + 1));
  std::string command = "ropecheck fuzz " + selector + " --spec " + quote(to_string(spec)) + " --replay " + quote(case_text(c));
  // The claim, where it is not the default (judge/tolerance.h kDefaultModel): the replay judges alike.
  if (candidate.claims().model != judge::kDefaultModel) command += " --model " + std::string(judge::name(candidate.claims().model));
  if (const std::optional<judge::Tolerance>& tolerance = candidate.claims().tolerance) {
    std::ostringstream t;
    t.precision(17);
    t << tolerance->value;
    command += std::string(" --tolerance ") + (tolerance->kind == judge::Tolerance::Kind::e ? "e=" : "ulp=") + t.str();
  }
  if (strict_zeros) command += " --strict-zeros";
  return command;
}

FuzzReport run_fuzz(const runner::Implementation& candidate, const FuzzOptions& options) {
  const std::vector<Spec> specs = options.specs.empty() ? default_specs() : options.specs;
  FuzzReport report;
  report.implementation = candidate.name();
  report.selector = candidate.selector();
  report.model = std::string(judge::name(candidate.claims().model));
  report.seed = options.seed;
  report.shard_index = options.shard_index;
  report.shard_count = options.shard_count;
  report.trials_requested = options.trials;
  report.strict_zeros = options.strict_zeros;
  std::vector<judge::Tolerance> tolerances;
  for (const Spec& spec : specs) {
    report.specs.push_back(to_string(spec));
    tolerances.push_back(candidate.tolerance(spec));
    report.tolerances.push_back(tolerances.back().value);
    report.tolerance_sources.push_back(tolerances.back().source);
  }
  const std::int64_t trials =
      options.trials.value_or(options.seconds ? std::numeric_limits<std::int64_t>::max() : std::int64_t{100});
  const auto start = std::chrono::steady_clock::now();

  struct Seen {
    std::int64_t trial;
    std::size_t spec_index;
    FuzzCase fuzz_case;
    Outcome outcome;
  };
  std::vector<Seen> seen_violations;
  for (std::int64_t t = options.shard_index; t < trials; t += options.shard_count) {
    if (options.seconds) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (elapsed >= *options.seconds) {
        report.stopped_by_time = true;
        break;
      }
    }
    ++report.trials_run;
    Rng rng = trial_rng(options.seed, t);
    const std::size_t spec_index = static_cast<std::size_t>(t) % specs.size();
    const Spec& spec = specs[spec_index];
    const judge::Tolerance& tolerance = tolerances[spec_index];
    bool first_of_class[kViolationClasses];
    std::fill(std::begin(first_of_class), std::end(first_of_class), true);
    auto note = [&](const std::vector<FuzzCase>& cases, const std::vector<Outcome>& outcomes) {
      report.cases += static_cast<std::int64_t>(cases.size());
      for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto v = static_cast<std::size_t>(outcomes[i].violation);
        if (v == 0) continue;
        ++report.violation_counts[v];
        if (first_of_class[v]) {
          first_of_class[v] = false;
          seen_violations.push_back({t, spec_index, cases[i], outcomes[i]});
        }
      }
    };
    std::vector<FuzzCase> cases;
    for (int i = 0, n = start_cases(spec); i < n; ++i) cases.push_back(edge_case(spec, rng));
    std::vector<Outcome> outcomes = evaluate(candidate, spec, tolerance, cases, options.strict_zeros);
    // An implementation that no longer takes calls (its circuit breaker: it hangs) ends the search;
    // what was found so far is reported, unshrunk (shrinking would need the calls).
    auto stopped = [&] {
      if (const std::optional<std::string> reason = candidate.stopped_reason()) report.stopped_reason = *reason;
      return !report.stopped_reason.empty();
    };
    if (outcomes[0].unsupported) {
      ++report.trials_unsupported;
      report.cases += static_cast<std::int64_t>(cases.size());
      continue;
    }
    note(cases, outcomes);
    std::size_t best = 0;
    for (std::size_t i = 1; i < cases.size(); ++i) {
      if (outcomes[i].e > outcomes[best].e) best = i;
    }
    FuzzCase best_case = cases[best];
    Outcome best_outcome = outcomes[best];
    const int rounds = climb_rounds(spec);
    for (int round = 0; round < rounds && !stopped(); ++round) {
      std::vector<FuzzCase> mutants;
      for (int i = 0; i < kMutantsPerRound; ++i) mutants.push_back(mutate(spec, best_case, rng));
      const std::vector<Outcome> mutant_outcomes = evaluate(candidate, spec, tolerance, mutants, options.strict_zeros);
      note(mutants, mutant_outcomes);
      for (std::size_t i = 0; i < mutants.size(); ++i) {
        if (mutant_outcomes[i].e > best_outcome.e) {
          best_case = mutants[i];
          best_outcome = mutant_outcomes[i];
        }
      }
    }
    Finding finding;
    finding.trial = t;
    finding.spec = report.specs[spec_index];
    finding.fuzz_case = best_case;
    finding.outcome = best_outcome;
    finding.tolerance = best_outcome.bound > 0 ? best_outcome.bound : tolerance.value;
    finding.replay = replay_command(candidate, spec, best_case, options.strict_zeros);
    report.worst.push_back(finding);
    std::sort(report.worst.begin(), report.worst.end(), [](const Finding& a, const Finding& b) {
      return a.outcome.e != b.outcome.e ? a.outcome.e > b.outcome.e : a.trial < b.trial;
    });
    if (static_cast<int>(report.worst.size()) > options.worst_count) report.worst.resize(options.worst_count);
    if (stopped()) break;
  }

  // Keep the first violations_per_class of each class (in trial order), then shrink those.
  std::stable_sort(seen_violations.begin(), seen_violations.end(), [](const Seen& a, const Seen& b) {
    return a.outcome.violation != b.outcome.violation ? a.outcome.violation < b.outcome.violation : a.trial < b.trial;
  });
  int kept_of_class[kViolationClasses] = {};
  for (const Seen& s : seen_violations) {
    if (kept_of_class[static_cast<int>(s.outcome.violation)]++ >= options.violations_per_class) continue;
    const Spec& spec = specs[s.spec_index];
    const judge::Tolerance& tolerance = tolerances[s.spec_index];
    Finding finding;
    finding.trial = s.trial;
    finding.spec = report.specs[s.spec_index];
    if (!report.stopped_reason.empty()) {
      finding.fuzz_case = s.fuzz_case;
      finding.outcome = s.outcome;
    } else {
      finding.fuzz_case = shrink(candidate, spec, tolerance, s.fuzz_case, s.outcome.violation, options.strict_zeros);
      finding.outcome = evaluate(candidate, spec, tolerance, {finding.fuzz_case}, options.strict_zeros)[0];
    }
    finding.tolerance = finding.outcome.bound > 0 ? finding.outcome.bound : tolerance.value;
    finding.replay = replay_command(candidate, spec, finding.fuzz_case, options.strict_zeros);
    report.violations.push_back(finding);
  }
  return report;
}

}  // namespace ropecheck::fuzz
