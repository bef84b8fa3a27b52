// The fused plugin route (runner/fused_plugin.h, include/ropecheck/fused.h): the careful plugin
// (tests/runner/plugins/fused_plugin.cpp) passes fused::judge_fused on default settings, in a child
// process and in this one; the buggy ones fail it; a crash and a missing entry point are reported as
// the call's failure, never as outputs.
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "fused/fused.h"
#include "runner/fused_plugin.h"

namespace ropecheck::runner {
namespace {

std::string plugin(const std::string& name) { return std::string(FUSED_PLUGIN_DIR) + "/libfused_plugin_" + name + ".so"; }

// The careful implementation: bf16 data, norm before the rotation, E4M3 at a per-token
// scale returned, k written into a paged cache.
const char* kPaged =
    "layout=half,head_dim=128,base=10000,dtype=bf16,norm=before,fp8=e4m3,scale=per_token,destination=paged,"
    "block_size=16,q_heads=4,k_heads=2";

struct Outcome {
  FusedCallResult call;
  fused::FusedJudgement judgement;
};

Outcome run(const std::string& name, const std::string& text, bool isolate = true) {
  const fused::FusedSpec spec = fused::parse_fused_spec(text);
  const fused::FusedInputs in = fused::random_inputs(spec, 40, 11);
  Outcome o;
  o.call = call_fused_plugin(plugin(name), spec, in, isolate, ChildLimits{20, 1024});
  if (o.call.status == ApplyResult::Status::ok) o.judgement = fused::judge_fused(spec, in, o.call.outputs, judge::kDefaultModel);
  return o;
}

TEST(FusedPlugin, CarefulPassesOnDefaults) {
  for (const char* text : {kPaged, "layout=half,head_dim=128,base=10000,dtype=bf16,norm=before,q_heads=2,k_heads=2",
                           "layout=interleaved,head_dim=64,rotary_dim=32,base=10000,dtype=bf16,norm=after,norm_weight=one_plus,fp8=e5m2,"
                           "scale=per_head,q_heads=2",
                           "layout=half,head_dim=128,base=500000,dtype=f16,norm=before,eps=1e-5,fp8=e4m3,scale=fixed,scale_value=0.03125",
                           "layout=half,head_dim=64,base=10000,dtype=f32,direction=inverse,norm=before,destination=paged,block_size=4"}) {
    const Outcome o = run("careful", text);
    ASSERT_EQ(o.call.status, ApplyResult::Status::ok) << text << ": " << o.call.message;
    EXPECT_EQ(o.judgement.verdict, judge::Verdict::pass) << text << "\n" << fused::fused_report_text(o.judgement);
  }
}

TEST(FusedPlugin, CarefulPassesInProcess) {
  const Outcome o = run("careful", kPaged, false);
  ASSERT_EQ(o.call.status, ApplyResult::Status::ok) << o.call.message;
  EXPECT_EQ(o.judgement.verdict, judge::Verdict::pass) << fused::fused_report_text(o.judgement);
  EXPECT_FALSE(o.call.outputs.k_cache.empty());
  EXPECT_EQ(o.call.outputs.q_scale.size(), 40u);
}

TEST(FusedPlugin, BugsFail) {
  for (const char* name : {"swap_weights", "scale_x2"}) {
    const Outcome o = run(name, kPaged);
    ASSERT_EQ(o.call.status, ApplyResult::Status::ok) << name << ": " << o.call.message;
    EXPECT_EQ(o.judgement.verdict, judge::Verdict::fail) << name << "\n" << fused::fused_report_text(o.judgement);
  }
}

TEST(FusedPlugin, CrashIsTheCallsFailure) {
  const Outcome o = run("segv", kPaged);
  EXPECT_EQ(o.call.status, ApplyResult::Status::crash);
  EXPECT_NE(o.call.message.find("SIGSEGV"), std::string::npos) << o.call.message;
}

TEST(FusedPlugin, HangIsKilledAtTheTimeout) {
  const fused::FusedSpec spec = fused::parse_fused_spec(kPaged);
  const fused::FusedInputs in = fused::random_inputs(spec, 8, 1);
  const FusedCallResult call = call_fused_plugin(plugin("hang"), spec, in, true, ChildLimits{0.5, 1024});
  EXPECT_EQ(call.status, ApplyResult::Status::timeout);
  EXPECT_NE(call.message.find("no answer within 0.5 s"), std::string::npos) << call.message;
}

TEST(FusedPlugin, MissingEntryPointNamesIt) {
  for (bool isolate : {true, false}) {
    const Outcome o = run("no_entry", kPaged, isolate);
    EXPECT_EQ(o.call.status, ApplyResult::Status::abi);
    EXPECT_NE(o.call.message.find("ropecheck_fused_v1"), std::string::npos) << o.call.message;
  }
  const Outcome missing = run("no_such_variant", kPaged);
  EXPECT_EQ(missing.call.status, ApplyResult::Status::load);
  EXPECT_NE(missing.call.message.find("dlopen failed"), std::string::npos) << missing.call.message;
}

TEST(FusedPlugin, UnsupportedSpecIsNotAFailure) {
  const Outcome o = run("careful", "layout=half,head_dim=64,base=10000,dtype=bf16,scaling=linear,factor=2,norm=before");
  EXPECT_EQ(o.call.status, ApplyResult::Status::unsupported) << o.call.message;
}

// `ropecheck ARGS` with stderr joined to stdout: (exit status, output).
std::pair<int, std::string> cli(const std::string& args) {
  const std::string command = std::string(ROPECHECK_BIN) + " " + args + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(FusedPluginCommand, CheckPluginExitStatusAndReport) {
  const std::string spec = std::string(" --spec '") + kPaged + "'";
  const auto [pass, pass_text] = cli("fused check --plugin " + plugin("careful") + spec + " --tokens 24");
  EXPECT_EQ(pass, 0) << pass_text;
  EXPECT_NE(pass_text.find("fused: PASS"), std::string::npos) << pass_text;
  for (const char* bug : {"swap_weights", "scale_x2"}) {
    const auto [fail, fail_text] = cli("fused check --plugin " + plugin(bug) + spec);
    EXPECT_EQ(fail, 1) << bug << "\n" << fail_text;
    EXPECT_NE(fail_text.find("fused: FAIL"), std::string::npos) << fail_text;
  }
  const auto [crash, crash_text] = cli("fused check --plugin " + plugin("segv") + spec);
  EXPECT_EQ(crash, 1) << crash_text;
  EXPECT_NE(crash_text.find("SIGSEGV"), std::string::npos) << crash_text;
  const auto [in_process, in_process_text] = cli("fused check --no-isolate --plugin " + plugin("careful") + spec);
  EXPECT_EQ(in_process, 0) << in_process_text;
  // An outputs file beside --plugin is refused in one line, exit 2.
  const auto [refused, refused_text] = cli("fused check --plugin " + plugin("careful") + spec + " in.npz out.npz");
  EXPECT_EQ(refused, 2) << refused_text;
  EXPECT_NE(refused_text.find("outputs: expected none with --plugin"), std::string::npos) << refused_text;
}

}  // namespace
}  // namespace ropecheck::runner
