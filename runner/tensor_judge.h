// Judging the user's own tensors, no golden file: `ropecheck check --spec ...
// --positions ... --input ... --candidate ...` and Python's `ropecheck.check` both feed a
// TensorJudge, so the pair rule, the horizon, the worst cases and the diagnosis are the golden
// loop's (judge/group.h), written once.
//
// Tensors arrive in chunks of whole tokens, so a check of 2048 tokens at each of 64 position
// ranges (537 M elements) runs in the memory of one chunk: each chunk's expected values come from
// reference::evaluate, computed chunk by chunk on `judge::Settings::threads` threads
// (GroupComparer::judge_evaluated), then the chunk is judged and dropped. Chunks are how a tensor
// is read, not what is judged: the tensor is one test in every report (GroupComparer::
// add_judged_parts), its cases naming tokens over the whole tensor. Only the diagnosis keeps
// data: a strided sample of the worst chunk, the first when none is worse (judge/diagnosis.h
// DiagnosisSampler, kDiagnosisSampleValues values).
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "judge/group.h"
#include "judge/settings.h"
#include "runner/golden_run.h"
#include "runner/implementation.h"
#include "spec/spec.h"

namespace ropecheck::runner {

class TensorJudge {
 public:
  // `label`: the group's name in reports (the candidate file, or "tensors"). `heads` and the
  // spec's head_dim fix a token's size. The candidate is held to `settings.claims`. Throws
  // UsageError for heads < 1.
  TensorJudge(const Spec& spec, std::int64_t heads, judge::Settings settings, std::string label);
  ~TensorJudge();
  TensorJudge(const TensorJudge&) = delete;
  TensorJudge& operator=(const TensorJudge&) = delete;

  // One chunk of whole tokens: positions row-major [tokens, position_components(spec)], input and
  // output row-major [tokens, heads, head_dim] (values of the spec's dtypes as doubles). Throws
  // InputError when the sizes disagree with each other. Tokens above the settings' max_position
  // are not judged. Chunks may come in any order; cases name the token's index over all chunks.
  void add(std::span<const std::int64_t> positions, std::span<const double> input, std::span<const double> output);
  // The same with the input handed over (a caller that read the chunk into a vector of its own):
  // the judge keeps it as the test's input instead of copying it, and gives its storage back once
  // judged (the values rounded to the input dtype), for the next chunk to be read into: a buffer
  // of 32 MB used again costs nothing, where a fresh one is 8192 page faults.
  std::vector<double> add(std::span<const std::int64_t> positions, std::vector<double>&& input, std::span<const double> output);

  // Faults in the arrays the diagnosis keeps for chunks of this tensor (its samples: 24 MB), which
  // the first add would otherwise write on one thread: for a caller with that thread idle before
  // it (check --spec, while the first chunk is read). Optional; the verdict is the same.
  // `tokens`: the tensor's.
  void prepare(std::int64_t tokens);
  // prepare's work on a thread of its own, started now: the first add waits for it only before it
  // takes its sample (once its chunk is judged), finish too. For a caller on several threads that
  // is about to judge its first chunk: the arrays' pages are faulted in while it is judged.
  void prepare_in_background(std::int64_t tokens);
  // The tensor's tokens in all, told before the first add: the diagnosis's sample spread over the
  // chunks then copies only the tokens it keeps (judge/diagnosis.h DiagnosisSampler::
  // expect_tokens). Optional; the verdict is the same. Cheap: call it at any thread count.
  void expect(std::int64_t tokens);

  // The verdict over every chunk added: one group (GroupResult::suite = label) of one test (none
  // when no token was added), whose cases have no test id (Case::test_id 0).
  judge::GroupResult finish();

  // Throws add's InputError when the sizes disagree with each other; else the chunk's tokens (a
  // caller that converts its values first asks before it does).
  std::size_t check_sizes(std::span<const std::int64_t> positions, std::size_t input_size, std::size_t output_size) const;

  // Values per chunk when the caller holds the whole tensors (judge_tensors) or streams a file
  // (gate's check --spec, which reads the next chunk while one is judged): 2^22 values keep a
  // chunk's input and output at 64 MB of doubles (the exact and rounded values are a workspace of
  // 2^18 values per thread) while leaving each thread a few hundred thousand values to evaluate.
  static constexpr std::int64_t kChunkElements = std::int64_t{1} << 22;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// One call over whole float64 tensors already in memory: TensorJudge with one chunk per
// kChunkElements values.
judge::GroupResult judge_tensors(const Spec& spec, std::int64_t heads, std::span<const std::int64_t> positions,
                                 std::span<const double> input, std::span<const double> output, const judge::Settings& settings,
                                 const std::string& label = "tensors");
// Values of a 16-bit dtype by their bit patterns, C-contiguous: one type per dtype, so that the
// variant below tells them apart and the widening reads the dtype from the type.
template <Dtype kDtype>
struct Bits16Span {
  std::span<const std::uint16_t> bits;
  std::size_t size() const { return bits.size(); }
  Bits16Span subspan(std::size_t offset, std::size_t count) const { return {bits.subspan(offset, count)}; }
};
using Binary16Span = Bits16Span<Dtype::f16>;   // IEEE binary16 (NumPy's float16 as it is)
using Bfloat16Span = Bits16Span<Dtype::bf16>;  // bfloat16 (a mapped safetensors or .npy tensor of BF16)
// The same for tensors held as float64, float32, binary16 or bfloat16 values (Python's check, and
// check --spec over mapped files): a narrower tensor is widened (exactly) a chunk at a time, on
// every thread, into buffers the chunks share, not copied whole into float64 first (memory would be
// four times a float16 tensor's own, the copies made on one thread before the judging: bench/README.md
// "A check's memory: widening"). `progress`, when
// given, is told the tokens judged so far after each chunk; once it is told every token, `input`
// and `output` are not read again (the diagnosis reads its own copies): a caller may release them.
using TensorValues = std::variant<std::span<const double>, std::span<const float>, Binary16Span, Bfloat16Span>;
judge::GroupResult judge_tensor_values(const Spec& spec, std::int64_t heads, std::span<const std::int64_t> positions, TensorValues input,
                                       TensorValues output, const judge::Settings& settings, const std::string& label = "tensors",
                                       const std::function<void(std::int64_t)>& progress = {});

// Frees what `held` owns on a thread of its own, while the caller goes on (a direct check's chunk
// buffers, 64 MB each, whose unmapping is otherwise serial work: bench/README.md
// "A check's memory: chunks"); the future joins it. Where no thread is to be had the task is deferred
// and never run: `held` is freed with the future, as it would have been without it.
template <class Held>
std::future<void> release_on_own_thread(Held&& held) {
  static_assert(!std::is_lvalue_reference_v<Held>, "hand the buffers over (std::move)");
  return std::async(std::launch::async | std::launch::deferred, [owned = std::forward<Held>(held)]() mutable { owned = Held{}; });
}

}  // namespace ropecheck::runner
