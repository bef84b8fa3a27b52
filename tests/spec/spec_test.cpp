// The spec parser: canonical round trips, JSON form, and rejections that name the field.
#include "spec/spec.h"

#include <gtest/gtest.h>

namespace ropecheck {
namespace {

TEST(Spec, DefaultsAndCanonicalForm) {
  const Spec spec = parse_spec("head_dim=64,base=10000");
  EXPECT_EQ(spec.rotary_dim, 64);
  EXPECT_EQ(spec.layout, Layout::interleaved);
  EXPECT_EQ(to_string(spec), "layout=interleaved,head_dim=64,rotary_dim=64,base=10000,dtype=f32,direction=forward,scaling=none");
}

TEST(Spec, EveryScalingRoundTripsThroughTextAndJson) {
  for (const char* text : {
           "layout=half,head_dim=128,rotary_dim=64,base=500000,dtype=bf16,direction=inverse,scaling=linear,factor=4",
           "layout=half,head_dim=128,base=10000,scaling=ntk,factor=8",
           "layout=half,head_dim=128,base=10000,scaling=dynamic,factor=2,original_max_position=4096,seq_len=9000",
           "layout=half,head_dim=128,base=1000000,scaling=yarn,factor=4,original_max_position=32768,truncate=false,mscale=1,mscale_all_dim=0.5",
           "layout=half,head_dim=128,base=10000,scaling=yarn-ggml,freq_scale=0.25,original_max_position=4096,ext_factor=1",
           "layout=half,head_dim=128,base=500000,scaling=llama3",
           "layout=half,head_dim=8,base=10000,scaling=longrope,short_factor=1/1/1/1,long_factor=2/2/2/2,original_max_position=4096,seq_len=10",
           "layout=interleaved,head_dim=16,base=10000,axes=2d",
           "layout=half,head_dim=128,base=1000000,axes=mrope,sections=16/24/24"}) {
    const Spec spec = parse_spec(text);
    EXPECT_EQ(parse_spec(to_string(spec)), spec) << text;
    EXPECT_EQ(parse_spec_json(to_json(spec)), spec) << text;
  }
}

TEST(Spec, JsonAcceptsNestedScalingAndNumbers) {
  const Spec spec = parse_spec_json(
      R"({"layout":"half","head_dim":64,"base":500000,"scaling":{"type":"llama3","factor":8,"original_max_position":8192}})");
  EXPECT_EQ(spec.scaling.type, ScalingType::llama3);
  EXPECT_EQ(spec.base, "500000");
  EXPECT_EQ(spec.scaling.original_max_position, 8192);
}

struct Rejection {
  std::string text;
  std::string field;
};

class SpecRejects : public ::testing::TestWithParam<Rejection> {};

TEST_P(SpecRejects, NamingTheField) {
  try {
    (void)parse_spec(GetParam().text);
    FAIL() << "accepted " << GetParam().text;
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("'" + GetParam().field + "'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("expected"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Invalid, SpecRejects,
    ::testing::Values(Rejection{"head_dim=64,rotary_dim=63", "rotary_dim"}, Rejection{"head_dim=64,rotary_dim=66", "rotary_dim"},
                      Rejection{"head_dim=64,base=1", "base"}, Rejection{"head_dim=64,base=0.5", "base"},
                      Rejection{"head_dim=64,base=abc", "base"}, Rejection{"head_dim=64,colour=red", "colour"},
                      Rejection{"rotary_dim=4", "head_dim"}, Rejection{"head_dim=64,layout=diagonal", "layout"},
                      Rejection{"head_dim=64,dtype=f8", "dtype"}, Rejection{"head_dim=64,scaling=linear", "factor"},
                      Rejection{"head_dim=64,scaling=linear,factor=-2", "factor"},
                      Rejection{"head_dim=64,scaling=yarn,factor=4", "original_max_position"},
                      Rejection{"head_dim=64,scaling=none,factor=4", "factor"},
                      Rejection{"head_dim=64,scaling=llama3,low_freq_factor=4,high_freq_factor=1", "high_freq_factor"},
                      Rejection{"head_dim=8,scaling=longrope,short_factor=1/1,long_factor=1/1/1/1,original_max_position=4,seq_len=1",
                                "short_factor"},
                      Rejection{"head_dim=64,axes=mrope,sections=16/8", "sections"}, Rejection{"head_dim=64,axes=mrope", "sections"},
                      Rejection{"head_dim=6,axes=2d", "rotary_dim"}, Rejection{"head_dim=2,scaling=ntk,factor=2", "rotary_dim"},
                      Rejection{"head_dim=64,direction=backward", "direction"}, Rejection{"head_dim=64,head_dim=32", "head_dim"},
                      Rejection{"head_dim=x", "head_dim"}, Rejection{"head_dim=64,scaling=yarn,factor=4,original_max_position=0", "original_max_position"}));

TEST(Spec, MalformedTextIsRejected) {
  EXPECT_THROW(parse_spec(""), SpecError);
  EXPECT_THROW(parse_spec("head_dim"), SpecError);
  EXPECT_THROW(parse_spec("=3"), SpecError);
  EXPECT_THROW(parse_spec_json("[1,2]"), SpecError);
  EXPECT_THROW(parse_spec_json("{\"head_dim\": {\"x\": 1}}"), SpecError);
  EXPECT_THROW(parse_spec_json("{"), SpecError);
}

}  // namespace
}  // namespace ropecheck
