#include "runner/tensor_judge.h"

#include <algorithm>
#include <cstdint>
#include <future>
#include <optional>
#include <type_traits>

#include "base/errors.h"
#include "base/parallel.h"
#include "judge/diagnosis.h"
#include "reference/rounding.h"

namespace ropecheck::runner {
namespace {

constexpr std::int64_t kTestId = 1;  // the tensor's one test

// The candidate's tolerance, decided the way Implementation::tolerance decides it for a candidate
// file (runner/implementation.h: an explicit --tolerance, else the model's default).
class GivenOutputs final : public Implementation {
 public:
  explicit GivenOutputs(Claims claims) : Implementation(std::move(claims)) {}
  std::string name() const override { return "tensors"; }
  std::string selector() const override { return "--candidate"; }
  ApplyResult run(const Spec&, Shape, std::span<const std::int64_t>, std::span<const double>) const override {
    return {ApplyResult::Status::unsupported, "outputs are given, not computed", {}};
  }
};

}  // namespace

struct TensorJudge::State {
  Spec spec;
  std::int64_t heads = 0;
  judge::Settings settings;
  std::string label;
  std::optional<judge::GroupComparer> comparer;
  // The tensor is one test (kTestId), whatever the chunks it streams in: what every chunk found,
  // combined in the order added, recorded by finish. Chunks are how it is read, not what is judged.
  std::optional<judge::GroupComparer::JudgedTest> judged;
  std::int64_t tokens_seen = 0;
  std::int64_t inputs_rounded = 0;
  judge::DiagnosisSampler sampler;
  // prepare_in_background's work, waited for before the sampler is first offered a chunk (declared
  // last: destroyed first, so a judge that throws waits for it before the sampler goes).
  std::future<void> prepared;
};

TensorJudge::TensorJudge(const Spec& spec, std::int64_t heads, judge::Settings settings, std::string label)
    : state_(std::make_unique<State>()) {
  if (heads < 1) throw UsageError("--heads: expected an integer >= 1, got " + std::to_string(heads));
  if (settings.threads < 0) throw UsageError("--threads: expected an integer >= 0, got " + std::to_string(settings.threads));
  validate(spec);
  State& s = *state_;
  s.spec = spec;
  s.heads = heads;
  s.settings = std::move(settings);
  s.label = std::move(label);
  const GivenOutputs given(s.settings.claims);
  s.comparer.emplace(s.label, 0, s.spec, s.settings.claims.model, given.tolerance(spec), s.settings);
}

TensorJudge::~TensorJudge() = default;

void TensorJudge::add(std::span<const std::int64_t> positions, std::span<const double> input, std::span<const double> output) {
  check_sizes(positions, input.size(), output.size());  // before the copy: a wrong size costs nothing
  add(positions, std::vector<double>(input.begin(), input.end()), output);
}

std::size_t TensorJudge::check_sizes(std::span<const std::int64_t> positions, std::size_t input_size, std::size_t output_size) const {
  const State& s = *state_;
  const Spec& spec = s.spec;
  const auto components = static_cast<std::size_t>(position_components(spec));
  const auto token_size = static_cast<std::size_t>(s.heads) * static_cast<std::size_t>(spec.head_dim);
  if (positions.size() % components != 0) {
    throw InputError("positions: expected " + std::to_string(components) + " components per token, got " +
                     std::to_string(positions.size()) + " values");
  }
  const std::size_t tokens = positions.size() / components;
  if (input_size != tokens * token_size) {
    throw InputError("input: expected " + std::to_string(tokens) + " tokens x " + std::to_string(s.heads) + " heads x " +
                     std::to_string(spec.head_dim) + " = " + std::to_string(tokens * token_size) + " values, got " +
                     std::to_string(input_size));
  }
  if (output_size != input_size) {
    throw InputError("candidate: expected " + std::to_string(input_size) + " values (as many as the input), got " +
                     std::to_string(output_size));
  }
  return tokens;
}

std::vector<double> TensorJudge::add(std::span<const std::int64_t> positions, std::vector<double>&& input_values,
                                     std::span<const double> output) {
  State& s = *state_;
  const Spec& spec = s.spec;
  const auto components = static_cast<std::size_t>(position_components(spec));
  const std::size_t tokens = check_sizes(positions, input_values.size(), output.size());
  if (tokens == 0) return std::move(input_values);
  judge::Call call;  // the chunk, as the call it would be on its own
  call.id = kTestId;
  const std::int64_t first_token = s.tokens_seen;
  s.tokens_seen += static_cast<std::int64_t>(tokens);
  call.tokens = static_cast<std::int64_t>(tokens);
  call.heads = s.heads;
  call.head_dim = spec.head_dim;
  call.positions.assign(positions.begin(), positions.end());
  call.input = std::move(input_values);
  // The spec's inputs are values of its input dtype (spec/README.md "Dtypes"): a float32 tensor
  // given for a bf16 spec is what the kernel rotated only once rounded to bf16, as torch's
  // .to(torch.bfloat16) and `ropecheck apply` round it (to nearest, ties to even). Judged unrounded,
  // every pass-through dim would differ from the candidate's and every pair's exact value would
  // be off by up to the input's rounding. Counted, for the report's note.
  // On every thread, not on one while the others wait (bench/README.md "A check's memory: widening").
  const Dtype input_dtype = input_dtype_of(spec);
  const std::vector<std::int64_t> rounded =
      map_token_ranges(static_cast<std::int64_t>(call.input.size()), s.settings.threads, [&](TokenRange range) {
        return reference::round_finite_to_format(
            std::span(call.input).subspan(static_cast<std::size_t>(range.begin), static_cast<std::size_t>(range.end - range.begin)),
            input_dtype);
      });
  for (const std::int64_t count : rounded) s.inputs_rounded += count;
  // No call.expected: computed, chunk by chunk. The chunk's cases name the token over all chunks.
  judge::GroupComparer::JudgedTest chunk = s.comparer->judge_evaluated(call, output, s.settings.threads);
  chunk.part.offset_tokens(first_token);
  if (s.judged) s.judged->combine(std::move(chunk));
  else s.judged.emplace(std::move(chunk));
  if (s.prepared.valid()) s.prepared.get();
  s.sampler.offer(call, output, static_cast<int>(components), s.judged->part.result.worst_e, first_token, s.settings.threads);
  return std::move(call.input);
}

void TensorJudge::prepare(std::int64_t tokens) {
  State& s = *state_;
  s.sampler.prepare(s.heads * s.spec.head_dim, position_components(s.spec), tokens);
}

void TensorJudge::prepare_in_background(std::int64_t tokens) {
  State& s = *state_;
  if (s.prepared.valid()) s.prepared.get();
  s.prepared = std::async(std::launch::async, [this, tokens] { prepare(tokens); });
}

void TensorJudge::expect(std::int64_t tokens) {
  State& s = *state_;
  s.sampler.expect_tokens(s.heads * s.spec.head_dim, tokens);
}

judge::GroupResult TensorJudge::finish() {
  State& s = *state_;
  if (s.prepared.valid()) s.prepared.get();
  if (s.judged) {
    s.comparer->add_judged_parts(kTestId, std::move(*s.judged));
    s.judged.reset();
  }
  judge::GroupResult g = s.comparer->finish();
  g.inputs_rounded = s.inputs_rounded;
  // A case names its token over the whole tensor (add offset it); there is no test id to name.
  for (judge::Case& c : g.worst) c.test_id = 0;
  std::vector<judge::TrimmedTest> trimmed;  // what `samples` points into once trimmed
  if (const std::vector<judge::DiagnosedTest> samples =
          judge::within_max_position(s.sampler.diagnosed(), s.spec, s.settings.max_position, trimmed);
      judge::needs_diagnosis(g) && !samples.empty()) {
    g.diagnosis = judge::diagnose(s.spec, samples, s.settings.claims.model, g.verdict == judge::Verdict::fail, s.settings.threads, &g);
  }
  return g;
}

namespace {

// values[begin, begin + count) as doubles into out[0, count): exact for every type.
template <class T>
void widen(std::span<const T> values, std::size_t begin, std::size_t count, double* out) {
  std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(begin), count, out);
}
template <Dtype kDtype>
void widen(Bits16Span<kDtype> values, std::size_t begin, std::size_t count, double* out) {
  for (std::size_t i = 0; i < count; ++i) out[i] = reference::decode_bits(values.bits[begin + i], kDtype);
}

// judge_tensors over spans of doubles, floats, binary16 or bfloat16 values: each chunk's input copied
// (widened) into one buffer the chunks share (the judge rounds it in place and gives it back); a
// narrower output widened into another, a double one read where it is.
template <class InSpan, class OutSpan>
judge::GroupResult judge_tensor_spans(const Spec& spec, std::int64_t heads, std::span<const std::int64_t> positions, InSpan input,
                                      OutSpan output, const judge::Settings& settings, const std::string& label,
                                      const std::function<void(std::int64_t)>& progress) {
  constexpr bool output_doubles = std::is_same_v<OutSpan, std::span<const double>>;
  TensorJudge judge(spec, heads, settings, label);
  const auto components = static_cast<std::size_t>(position_components(spec));
  const std::size_t token_size = static_cast<std::size_t>(std::max<std::int64_t>(heads, 1)) * static_cast<std::size_t>(spec.head_dim);
  const std::size_t tokens = judge.check_sizes(positions, input.size(), output.size());  // add's message when they disagree
  const std::size_t chunk = std::max<std::size_t>(1, static_cast<std::size_t>(TensorJudge::kChunkElements) / token_size);
  std::vector<double> chunk_input, chunk_output;
  judge.expect(static_cast<std::int64_t>(tokens));
  // The diagnosis sample's arrays (up to 24 MB, TensorJudge::prepare) are written on a thread of
  // their own while the first chunk is judged, not while its buffers are populated: pages are
  // faulted in no faster on more threads (MADV_POPULATE_WRITE), so there the sample's faults would
  // put off the judging (bench/README.md "A check's memory: sample"). On one thread, left to the
  // first add (the same work).
  const bool prepare_aside = resolve_threads(settings.threads) > 1 && tokens > 0;
  for (std::size_t t = 0; t < tokens; t += chunk) {
    const std::size_t n = std::min(chunk, tokens - t);
    const InSpan in = input.subspan(t * token_size, n * token_size);
    const OutSpan out = output.subspan(t * token_size, n * token_size);
    // Copied (widened) on every thread, not on one while the others wait (bench/README.md
    // "A check's memory: widening"). Only the first chunk's buffers are new memory (faulted in on every
    // thread by resize_for_overwrite).
    const std::size_t values = n * token_size;
    resize_for_overwrite(chunk_input, values, settings.threads);
    if constexpr (!output_doubles) resize_for_overwrite(chunk_output, values, settings.threads);
    const int copy_threads = values < kParallelCopyValues ? 1 : settings.threads;
    const std::vector<TokenRange> ranges = token_ranges(static_cast<std::int64_t>(values), copy_threads);
    parallel_for(ranges.size(), copy_threads, [&](std::size_t w) {
      const TokenRange range = ranges[w];
      const auto begin = static_cast<std::size_t>(range.begin), count = static_cast<std::size_t>(range.end - range.begin);
      widen(in, begin, count, chunk_input.data() + begin);
      if constexpr (!output_doubles) widen(out, begin, count, chunk_output.data() + begin);
    });
    std::span<const double> out_values;
    if constexpr (output_doubles) {
      out_values = out;
    } else {
      out_values = chunk_output;
    }
    if (prepare_aside && t == 0) judge.prepare_in_background(static_cast<std::int64_t>(tokens));
    chunk_input = judge.add(positions.subspan(t * components, n * components), std::move(chunk_input), out_values);
    if (progress) progress(static_cast<std::int64_t>(t + n));
  }
  // The chunk buffers (64 MB) freed while the tensor is diagnosed (joined when the verdict is made).
  const std::future<void> released = release_on_own_thread(std::make_pair(std::move(chunk_input), std::move(chunk_output)));
  return judge.finish();
}

}  // namespace

judge::GroupResult judge_tensors(const Spec& spec, std::int64_t heads, std::span<const std::int64_t> positions,
                                 std::span<const double> input, std::span<const double> output, const judge::Settings& settings,
                                 const std::string& label) {
  return judge_tensor_spans(spec, heads, positions, input, output, settings, label, {});
}

judge::GroupResult judge_tensor_values(const Spec& spec, std::int64_t heads, std::span<const std::int64_t> positions, TensorValues input,
                                       TensorValues output, const judge::Settings& settings, const std::string& label,
                                       const std::function<void(std::int64_t)>& progress) {
  return std::visit([&](auto in, auto out) { return judge_tensor_spans(spec, heads, positions, in, out, settings, label, progress); },
                    input, output);
}

}  // namespace ropecheck::runner
