// The spec parser: canonical round trips, JSON form, and rejections that name the field.
#include "base/random.h"
#include "spec/spec.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

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

// The documented error: one line "spec field 'FIELD': expected WHAT, got 'VALUE'".
template <class Parse>
void expect_spec_error(Parse parse, const std::string& field, const std::string& expected, const std::string& got) {
  try {
    parse();
    ADD_FAILURE() << "accepted; expected an error about " << field;
  } catch (const SpecError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("spec field '" + field + "': expected ", 0), 0u) << m;
    EXPECT_NE(m.find(expected), std::string::npos) << m << " (expected " << expected << ")";
    EXPECT_NE(m.find("got '" + got + "'"), std::string::npos) << m << " (got " << got << ")";
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

void expect_text_error(const std::string& text, const std::string& field, const std::string& expected, const std::string& got) {
  SCOPED_TRACE(text);
  expect_spec_error([&] { (void)parse_spec(text); }, field, expected, got);
}

void expect_json_error(const std::string& json, const std::string& field, const std::string& expected, const std::string& got) {
  SCOPED_TRACE(json);
  expect_spec_error([&] { (void)parse_spec_json(json); }, field, expected, got);
}

TEST(Spec, BadEnumValuesNameTheAcceptedOnes) {
  expect_text_error("head_dim=64,axes=3d", "axes", "none|2d|mrope|imrope", "3d");
  expect_json_error(R"({"head_dim":64,"axes":"mRoPE"})", "axes", "none|2d|mrope|imrope", "mRoPE");
  // truncate is a yarn boolean: only the words true and false.
  expect_text_error("head_dim=64,scaling=yarn,factor=4,original_max_position=4096,truncate=1", "truncate", "true|false", "1");
  expect_text_error("head_dim=64,scaling=yarn,factor=4,original_max_position=4096,truncate=True", "truncate", "true|false",
                    "True");
}

TEST(Spec, LongropeFactorCountsMustBeRotaryDimOverTwo) {
  // head_dim 8: 4 frequencies, so 4 long factors; 3 and 5 are refused, naming the count expected.
  expect_text_error("head_dim=8,scaling=longrope,short_factor=1/1/1/1,long_factor=2/2/2,original_max_position=4,seq_len=1",
                    "long_factor", "4 factors", "3 factors");
  expect_text_error("head_dim=8,scaling=longrope,short_factor=1/1/1/1,long_factor=2/2/2/2/2,original_max_position=4,seq_len=1",
                    "long_factor", "4 factors", "5 factors");
  // rotary_dim, not head_dim, sets the count.
  expect_text_error(
      "head_dim=16,rotary_dim=8,scaling=longrope,short_factor=1/1/1/1,long_factor=2/2/2/2/2/2/2/2,original_max_position=4,seq_len=1",
      "long_factor", "4 factors", "8 factors");
}

TEST(Spec, JsonValuesMustBeScalarsOrArraysOfScalars) {
  expect_json_error(R"({"head_dim":null})", "head_dim", "a string, number or boolean", "null");
  expect_json_error(R"({"head_dim":64,"axes":"mrope","sections":[16,{"n":16}]})", "sections", "a string, number or boolean",
                    R"({"n":16})");
  expect_json_error(R"({"head_dim":64,"axes":"mrope","sections":[16,null]})", "sections", "a string, number or boolean", "null");
  // Only "scaling" may hold an object.
  expect_json_error(R"({"head_dim":64,"axes":{"kind":"2d"}})", "axes", "a scalar or array", "an object");
  expect_json_error(R"({"head_dim":64,"base":{"value":10000}})", "base", "a scalar or array", "an object");
}

TEST(Spec, JsonNestedScalingTakesArrayParameters) {
  // The nested form with lists equals the compact form with '/'-separated lists.
  const Spec nested = parse_spec_json(
      R"({"layout":"half","head_dim":8,"scaling":{"type":"longrope","short_factor":[1,1.5,2,4],"long_factor":["2","2","3","0.5"],)"
      R"("original_max_position":4096,"seq_len":10}})");
  EXPECT_EQ(nested,
            parse_spec("layout=half,head_dim=8,scaling=longrope,short_factor=1/1.5/2/4,long_factor=2/2/3/0.5,original_max_position=4096,seq_len=10"));
  EXPECT_EQ(nested.scaling.short_factor, (std::vector<std::string>{"1", "1.5", "2", "4"}));
  EXPECT_EQ(nested.scaling.long_factor, (std::vector<std::string>{"2", "2", "3", "0.5"}));
  // A wrong count inside the nested object is refused like the flat one.
  expect_json_error(R"({"head_dim":8,"scaling":{"type":"longrope","short_factor":[1,1,1,1],"long_factor":[2,2],)"
                    R"("original_max_position":4,"seq_len":1}})",
                    "long_factor", "4 factors", "2 factors");
}

TEST(Spec, JsonNestedScalingErrorsNameTheParameter) {
  // A bad value inside "scaling":{...} names its own key, not "scaling".
  expect_json_error(R"({"head_dim":64,"scaling":{"type":"linear","factor":null}})", "factor", "a string, number or boolean", "null");
  expect_json_error(R"({"head_dim":8,"scaling":{"type":"longrope","short_factor":[1,{"x":1},1,1],"long_factor":[2,2,2,2],)"
                    R"("original_max_position":4,"seq_len":1}})",
                    "short_factor", "a string, number or boolean", R"({"x":1})");
  expect_json_error(R"({"head_dim":64,"scaling":{"type":"yarn","factor":4,"original_max_position":4096,"truncate":"maybe"}})",
                    "truncate", "true|false", "maybe");
}

TEST(Spec, JsonParameterGivenTwiceIsRefused) {
  // The compact form refuses a key given twice; JSON must too, not keep one of them silently:
  // flat beside nested, the nested "type" beside a nested "scaling", a key repeated in the text.
  const std::pair<const char*, const char*> cases[] = {
      {R"({"head_dim":64,"factor":4,"scaling":{"type":"linear","factor":2}})", "factor"},
      {R"({"head_dim":64,"scaling":{"type":"linear","scaling":"ntk","factor":2}})", "scaling"},
      {R"({"head_dim":64,"head_dim":32})", "head_dim"},
      {R"({"head_dim":64,"scaling":{"type":"linear","factor":2,"factor":4}})", "factor"}};
  for (const auto& [json, field] : cases) {
    SCOPED_TRACE(json);
    try {
      (void)parse_spec_json(json);
      ADD_FAILURE() << "accepted";
    } catch (const SpecError& e) {
      EXPECT_EQ(std::string(e.what()), "spec field '" + std::string(field) + "': expected once, got a duplicate");
    }
  }
}

// A value nested deeper than kMaxJsonDepth is refused before parsing (the error message
// dumped it recursively: 100 000 levels overflowed the stack), naming where it goes too deep.
TEST(Spec, JsonNestedTooDeepIsRefusedBeforeParsing) {
  try {
    parse_spec_json("{\"layout\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
    ADD_FAILURE() << "accepted JSON nested 100000 deep";
  } catch (const SpecError& e) {
    EXPECT_STREQ(e.what(), "spec: byte 74: expected JSON nested at most 64 deep, got deeper");
  }
  // 64 deep is allowed (and then refused for what it is: not a scalar).
  EXPECT_THROW(parse_spec_json("{\"layout\": " + std::string(63, '[') + std::string(63, ']') + "}"), SpecError);
}

// The vocabulary real models need. Canonical texts by hand.
TEST(Spec, InterleavedMropeFourSectionsAndInputDtype) {
  const Spec imrope = parse_spec("layout=half,head_dim=128,base=5000000,dtype=bf16,axes=imrope,sections=24/20/20");
  EXPECT_EQ(imrope.axes.kind, AxesKind::imrope);
  EXPECT_EQ(position_components(imrope), 3);
  EXPECT_EQ(to_string(imrope),
            "layout=half,head_dim=128,rotary_dim=128,base=5000000,dtype=bf16,direction=forward,scaling=none,axes=imrope,"
            "sections=24/20/20");
  // ggml's four-section form with a zero section: four position components per token.
  const Spec four = parse_spec("layout=half,head_dim=128,base=1000000,axes=mrope,sections=16/24/24/0");
  EXPECT_EQ(position_components(four), 4);
  EXPECT_EQ(to_string(four),
            "layout=half,head_dim=128,rotary_dim=128,base=1000000,dtype=f32,direction=forward,scaling=none,axes=mrope,"
            "sections=16/24/24/0");
  EXPECT_EQ(to_json(four),
            R"({"layout":"half","head_dim":128,"rotary_dim":128,"base":"1000000","dtype":"f32","direction":"forward",)"
            R"("scaling":"none","axes":"mrope","sections":[16,24,24,0]})");
  // GPT-J: f16 in, f32 out. Printed right after dtype, only when it differs.
  const Spec gptj = parse_spec("layout=interleaved,head_dim=256,rotary_dim=64,dtype=f32,input_dtype=f16");
  EXPECT_EQ(gptj.input_dtype, Dtype::f16);
  EXPECT_EQ(input_dtype_of(gptj), Dtype::f16);
  EXPECT_EQ(to_string(gptj),
            "layout=interleaved,head_dim=256,rotary_dim=64,base=10000,dtype=f32,input_dtype=f16,direction=forward,scaling=none");
  EXPECT_EQ(to_json(gptj),
            R"({"layout":"interleaved","head_dim":256,"rotary_dim":64,"base":"10000","dtype":"f32","input_dtype":"f16",)"
            R"("direction":"forward","scaling":"none"})");
  // The same dtype twice is the spec without the key: same value, same text.
  const Spec same = parse_spec("head_dim=64,dtype=bf16,input_dtype=bf16");
  EXPECT_EQ(same, parse_spec("head_dim=64,dtype=bf16"));
  EXPECT_EQ(to_string(same), "layout=interleaved,head_dim=64,rotary_dim=64,base=10000,dtype=bf16,direction=forward,scaling=none");
  EXPECT_EQ(input_dtype_of(same), Dtype::bf16);
  for (const Spec& spec : {imrope, four, gptj, parse_spec("layout=half,head_dim=8,axes=imrope,sections=1/1/1/1")}) {
    EXPECT_EQ(parse_spec(to_string(spec)), spec);
    EXPECT_EQ(parse_spec_json(to_json(spec)), spec);
  }
}

TEST(Spec, NewVocabularyRejectionsNameTheField) {
  // Inputs must be values of the output dtype (widening only).
  expect_text_error("head_dim=64,dtype=f16,input_dtype=f32", "input_dtype", "values of dtype=f16", "f32");
  expect_text_error("head_dim=64,dtype=bf16,input_dtype=f16", "input_dtype", "values of dtype=bf16", "f16");
  expect_text_error("head_dim=64,input_dtype=f8", "dtype", "f64|f32|f16|bf16", "f8");
  expect_text_error("head_dim=64,axes=imrope,sections=16/16", "sections", "3 (t/h/w) or 4 (t/h/w/e)", "2 counts");
  expect_text_error("head_dim=64,axes=imrope,sections=8/8/8/8/0", "sections", "3 (t/h/w) or 4", "5 counts");
  expect_text_error("head_dim=64,axes=imrope,sections=16/8/4", "sections", "summing to rotary_dim/2=32", "28");
  expect_text_error("head_dim=64,axes=mrope,sections=16/24/-8", "sections", "pair counts in [0, 65536]", "-8");
  try {
    (void)parse_spec("head_dim=64,axes=imrope");
    ADD_FAILURE() << "accepted imrope without sections";
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()), "spec field 'sections': expected '/'-separated pair counts for axes=imrope, got nothing (missing)");
  }
  expect_text_error("head_dim=64,axes=2d,sections=8/8", "sections", "axes=mrope or axes=imrope", "8/8");
}

// SplitMix64 advances its state by the golden-ratio constant per output (Steele, Lea, Flood 2014),
// so discard(n) must land where n calls of next() land: a stream generated in slices (golden
// generate's threads) is the stream generated in one go.
TEST(SplitMix64, DiscardSkipsExactlyThatManyOutputs) {
  for (const std::uint64_t n : {0ULL, 1ULL, 2ULL, 1000ULL, 123457ULL}) {
    SplitMix64 stepped(42), skipped(42);
    for (std::uint64_t i = 0; i < n; ++i) stepped.next();
    skipped.discard(n);
    for (int k = 0; k < 4; ++k) EXPECT_EQ(stepped.next(), skipped.next()) << "n = " << n;
  }
  // The first outputs of seed 0 (the published splitmix64 reference values).
  SplitMix64 zero(0);
  zero.discard(1);
  EXPECT_EQ(zero.next(), 0x6e789e6aa1b965f4ULL);
}

// A number of 30,000+ digits — on the command line, in a golden file's group spec, in Python — is
// one SpecError naming the field and the bound, its text not echoed whole (the former regex
// recursed per character and overflowed the stack: SIGSEGV in every command).
TEST(Spec, VeryLongNumbersAreRefusedByName) {
  const std::string digits(40000, '1');
  for (const std::string& text : {"layout=half,head_dim=64,base=" + digits, "layout=half,head_dim=64,base=1." + digits,
                                  "layout=half,head_dim=64,base=10000,scaling=linear,factor=" + digits}) {
    try {
      (void)parse_spec(text);
      ADD_FAILURE() << "accepted " << text.size() << " characters";
    } catch (const SpecError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("at most 400 characters"), std::string::npos) << message.substr(0, 200);
      EXPECT_LT(message.size(), 300u);
    }
  }
  EXPECT_THROW((void)parse_spec_json(R"({"layout":"half","head_dim":64,"base":")" + digits + R"("})"), SpecError);
  // The scanner accepts what the grammar says and nothing else.
  for (const char* ok : {"10000", "+1.5", "2.", "1e6", "1.5E+3", "12.25", "0.5e1"}) {
    EXPECT_NO_THROW((void)parse_spec(std::string("head_dim=4,base=") + ok)) << ok;
  }
  for (const char* bad : {".", "e5", "1e", "1e+", "1.2.3", "--1", "1 ", "0x10", "inf", "nan", ""}) {
    EXPECT_THROW((void)parse_spec(std::string("head_dim=4,base=") + bad), SpecError) << bad;
  }
}

// An attention factor beyond the dtype's largest value leaves no finite output to judge (1e308 was
// accepted, and the reference's own ±inf outputs then failed its judge): refused by name.
TEST(Spec, AttentionFactorsWhoseOutputsCannotBeFiniteAreRefused) {
  const std::string yarn = "layout=half,head_dim=64,base=10000,scaling=yarn,factor=4,original_max_position=4096,";
  for (const char* bad : {"dtype=f32,attention_factor=1e308", "dtype=f16,attention_factor=70000", "dtype=bf16,attention_factor=1e39"}) {
    try {
      (void)parse_spec(yarn + bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const SpecError& e) {
      EXPECT_NE(std::string(e.what()).find("attention_factor"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW((void)parse_spec(yarn + "dtype=f16,attention_factor=60000"));
  EXPECT_NO_THROW((void)parse_spec(yarn + "dtype=f32,attention_factor=1e30"));
}

}  // namespace
}  // namespace ropecheck

namespace ropecheck {
namespace {

// Spec text as people type it: blanks around keys, values, '=' and ',' (and '/' in lists) are
// tolerated; the canonical form is the one without blanks.
TEST(Spec, BlanksAroundKeysValuesAndSeparatorsAreTolerated) {
  const std::string canonical = to_string(parse_spec("layout=half,head_dim=128,base=10000"));
  for (const char* text : {"layout=half, head_dim=128, base=10000", "layout = half , head_dim= 128 ,base =10000",
                           " layout=half,\thead_dim=128,base=10000 ", "layout=half,\n  head_dim=128,\n  base=10000\n"}) {
    SCOPED_TRACE(text);
    const Spec spec = parse_spec(text);
    EXPECT_EQ(to_string(spec), canonical);
    EXPECT_EQ(to_string(spec).find(' '), std::string::npos);
  }
  EXPECT_EQ(parse_spec("layout=half, head_dim=128, axes=mrope, sections=16 / 24 / 24"),
            parse_spec("layout=half,head_dim=128,axes=mrope,sections=16/24/24"));
  EXPECT_EQ(parse_spec("layout=half,head_dim=8,scaling=longrope,short_factor=1 / 1.5/2/ 4,long_factor=2/2/3/0.5,"
                       " original_max_position=4096, seq_len=10"),
            parse_spec("layout=half,head_dim=8,scaling=longrope,short_factor=1/1.5/2/4,long_factor=2/2/3/0.5,"
                       "original_max_position=4096,seq_len=10"));
  // A blank inside a key or a value is still refused, naming it; so are empty items.
  expect_text_error("head_dim=1 28", "head_dim", "an integer", "1 28");
  expect_text_error("head_dim=128,lay out=half", "lay out", "a known key", "lay out");
  EXPECT_THROW((void)parse_spec("head_dim=128, ,base=10000"), SpecError);
  EXPECT_THROW((void)parse_spec(" = 3"), SpecError);
  EXPECT_THROW((void)parse_spec("   "), SpecError);
}

// The layouts as the ecosystem names them (docs/rope.md §1): neox is the half layout (HF's
// rotate_half, pairs (j, j + d/2)), gptj the interleaved one (pairs (2j, 2j + 1)); HF's rope_theta
// is the base. The canonical form keeps the project's names.
TEST(Spec, EcosystemAliasesReadAsTheProjectsNames) {
  EXPECT_EQ(parse_spec("layout=neox,head_dim=64").layout, Layout::half);
  EXPECT_EQ(parse_spec("layout=gptj,head_dim=64").layout, Layout::interleaved);
  const Spec theta = parse_spec("layout=neox,head_dim=128,rope_theta=500000,dtype=bf16");
  EXPECT_EQ(theta.base, "500000");
  EXPECT_EQ(to_string(theta), "layout=half,head_dim=128,rotary_dim=128,base=500000,dtype=bf16,direction=forward,scaling=none");
  EXPECT_EQ(parse_spec_json(R"({"layout":"gptj","head_dim":64,"rope_theta":10000})"),
            parse_spec("layout=interleaved,head_dim=64,base=10000"));
  // An alias beside its key is one key given twice, in both forms.
  for (const auto& attempt : {std::function<void()>([] { (void)parse_spec("head_dim=64,base=10000,rope_theta=10000"); }),
                              std::function<void()>([] { (void)parse_spec_json(R"({"head_dim":64,"rope_theta":1e4,"base":1e4})"); })}) {
    try {
      attempt();
      ADD_FAILURE() << "accepted";
    } catch (const SpecError& e) {
      EXPECT_EQ(std::string(e.what()), "spec field 'base': expected once, got a duplicate ('rope_theta' is 'base')");
    }
  }
  // Words that are not layouts stay refused, and the message names the aliases accepted.
  expect_text_error("head_dim=64,layout=llama", "layout", "interleaved|half (or gptj|neox)", "llama");
}

}  // namespace
}  // namespace ropecheck
