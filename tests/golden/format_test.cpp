// The golden-file reader and writer (golden/format.cpp): hex floats, exact error messages with the
// JSON path of the offending field, robustness on malformed input, and write(parse(t)) == t.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "golden/golden.h"
#include "golden/sha256.h"
#include "reference/rounding.h"

namespace ropecheck::golden {
namespace {

using Json = nlohmann::ordered_json;

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::filesystem::path suites_dir() { return ROPECHECK_GOLDEN_SUITES; }

// A small valid file: the first test of the first group of a checked-in suite (real data).
std::string small_file(const std::string& suite) {
  GoldenFile f = read_golden_file((suites_dir() / (suite + ".json")).string());
  f.groups.resize(1);
  if (f.kind == Kind::rope) f.groups[0].rope_tests.resize(1);
  else f.groups[0].attention_tests.resize(1);
  f.number_of_tests = 1;
  return write_golden(f);
}

// The reader's message for `text`, or "" when it parses.
std::string error_of(const std::string& text, const std::string& name = "x.json") {
  try {
    parse_golden(text, name);
  } catch (const GoldenError& e) {
    return e.what();
  }
  return "";
}

std::string mutated(const std::string& text, const std::function<void(Json&)>& change) {
  Json j = Json::parse(text);
  change(j);
  return j.dump();
}

TEST(HexFloat, FormatsLikeC99AndParsesBack) {
  EXPECT_EQ(reference::to_hex(0.75), "0x1.8p-1");
  EXPECT_EQ(reference::to_hex(-0.0), "-0x0p+0");
  EXPECT_EQ(reference::to_hex(0.0), "0x0p+0");
  EXPECT_EQ(reference::to_hex(1.0), "0x1p+0");
  EXPECT_EQ(reference::to_hex(std::ldexp(1.0, -1074)), "0x1p-1074");  // normalised, unlike glibc's %a
  EXPECT_EQ(reference::to_hex(65504.0), "0x1.ffcp+15");
  EXPECT_EQ(reference::to_hex(std::nan("")), "nan");
  EXPECT_EQ(reference::to_hex(-INFINITY), "-inf");
  // Random bit patterns: parse(format(x)) == x bit for bit, and glibc's %a agrees on normal values
  // (an independent implementation of the same C99 grammar).
  std::mt19937_64 bits(12345);
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t b = bits();
    double x;
    std::memcpy(&x, &b, sizeof x);
    if (std::isnan(x)) continue;
    const std::string text = reference::to_hex(x);
    const std::optional<double> back = reference::parse_hex(text);
    ASSERT_TRUE(back.has_value()) << text;
    EXPECT_EQ(std::memcmp(&x, &*back, sizeof x), 0) << text;
    if (std::isnormal(x)) {
      char c_text[64];
      std::snprintf(c_text, sizeof c_text, "%a", x);
      EXPECT_EQ(text, c_text);
    }
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), x) << text;
  }
}

TEST(HexFloat, RejectsWhatIsNotAnExactHexFloat) {
  for (const char* bad : {"", "1.5", "0x", "0x1p", "0x1.p+0", "0x.8p+0", "0x1.8", "0xg", "-nan", "NaN", "Infinity",
                          "+0x1p+0", " 0x1p+0", "0x1p+0 ", "0x1.8p-1x", "0x1.fffffffffffff8p+0", "0x1p+1024",
                          "0x1p-1075", "0x1.8p-1074", "0x1p+99999999"}) {
    EXPECT_FALSE(reference::parse_hex(bad).has_value()) << bad;
  }
  EXPECT_EQ(reference::parse_hex("0x0.0000000000001p-1022"), std::ldexp(1.0, -1074));  // glibc's subnormal form
  EXPECT_EQ(reference::parse_hex("0X1P+0"), std::nullopt);  // the format writes lower case only
  EXPECT_EQ(reference::parse_hex("0x10p-4"), 1.0);
  EXPECT_EQ(reference::parse_hex("0x1.000p+0"), 1.0);
}

TEST(Reader, RoundTripsEveryCheckedInFileByteForByte) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(suites_dir())) {
    const std::string text = read_text(entry.path());
    const GoldenFile f = parse_golden(text, entry.path().string());
    EXPECT_EQ(write_golden(f) == text, true) << entry.path();
    ++files;
  }
  EXPECT_GE(files, 30);
}

TEST(Reader, NamesTheFieldPathAndWhatWasExpected) {
  const std::string good = small_file("half-f16-base10000");
  ASSERT_EQ(error_of(good), "");
  const Json parsed = Json::parse(good);
  const std::size_t count = parsed["groups"][0]["tests"][0]["input"].size();

  EXPECT_EQ(error_of(mutated(good, [](Json& j) { j["groups"][0]["tests"][0]["expected"][3] = 12; })),
            "x.json: groups[0].tests[0].expected[3]: expected a hex-float string, got 12");
  EXPECT_EQ(error_of(mutated(good, [](Json& j) { j["schema"] = "ropecheck-golden/2"; })),
            "x.json: schema: expected \"ropecheck-golden/1\", got \"ropecheck-golden/2\"");
  EXPECT_EQ(error_of(mutated(good, [](Json& j) { j["groups"][0]["tests"][0]["input"].erase(0); })),
            "x.json: groups[0].tests[0].input: expected an array of " + std::to_string(count) +
                " hex-float strings (from shape), got an array of " + std::to_string(count - 1) + " items");
  EXPECT_EQ(error_of(mutated(good, [](Json& j) { j["groups"][0]["tests"][0].erase("expected"); })),
            "x.json: groups[0].tests[0].expected: expected a value (required field), got nothing");
  EXPECT_EQ(error_of(mutated(good, [](Json& j) { j["groups"][0]["tests"][0]["expceted"] = Json::array(); })),
            "x.json: groups[0].tests[0].expceted: expected one of the fields id, comment, flags, positions, "
            "shape, input, expected, expected_f32_recipe, exact, got an unknown field");
  // 1 + 2^-23 is a float32 value but not a float16 one.
  EXPECT_EQ(error_of(mutated(good, [](Json& j) { j["groups"][0]["tests"][0]["input"][1] = "0x1.000002p+0"; })),
            "x.json: groups[0].tests[0].input[1]: expected a value of f16, got \"0x1.000002p+0\" (not representable)");
  EXPECT_EQ(error_of(mutated(good, [](Json& j) { j["groups"][0]["tests"][0]["expected"][0] = "0x1.8"; })),
            "x.json: groups[0].tests[0].expected[0]: expected a hex-float string (e.g. \"0x1.8p-1\", \"-0x0p+0\", "
            "\"nan\", \"inf\"), got \"0x1.8\"");
  EXPECT_EQ(error_of(mutated(good, [](Json& j) { j["groups"][0]["tests"][0]["positions"][0] = -1; })),
            "x.json: groups[0].tests[0].positions[0]: expected an integer in [0, 9007199254740991], got -1");
  EXPECT_EQ(error_of(mutated(good, [](Json& j) { j["groups"][0]["tests"][0]["shape"][2] = 32; })),
            "x.json: groups[0].tests[0].shape[2]: expected the spec's head_dim 64, got 32");
  EXPECT_EQ(error_of(mutated(good, [](Json& j) { j["groups"][0]["tests"][0]["id"] = 1.5; })),
            "x.json: groups[0].tests[0].id: expected an integer in [1, 9007199254740991], got 1.5");
  EXPECT_EQ(error_of(mutated(good, [](Json& j) { j["kind"] = "matrix"; })),
            "x.json: kind: expected \"rope\" or \"attention\", got \"matrix\"");
  EXPECT_EQ(error_of(mutated(good, [](Json& j) { j["notes"] = Json::array(); })),
            "x.json: notes: expected an object mapping each flag to its explanation, got an array of 0 items");
  // The spec parser's own message, prefixed with the spec's path.
  EXPECT_EQ(error_of(mutated(good, [](Json& j) { j["groups"][0]["spec"]["rotary_dim"] = 3; })).rfind(
                "x.json: groups[0].spec: spec field 'rotary_dim'", 0),
            0u);
  EXPECT_EQ(error_of("{\"schema\": ", "y.json").rfind("y.json: expected valid JSON, got a syntax error", 0), 0u);
  EXPECT_EQ(error_of("[]"), "x.json: (top level): expected an object, got an array of 0 items");
}

TEST(Reader, ChecksMultiAxisPositionTuples) {
  const std::string good = small_file("axes-mrope");
  ASSERT_EQ(error_of(good), "");
  EXPECT_EQ(error_of(mutated(good, [](Json& j) { j["groups"][0]["tests"][0]["positions"][0] = Json::array({0, 0}); })),
            "x.json: groups[0].tests[0].positions[0]: expected a tuple of 3 positions, got an array of 2 items");
  EXPECT_EQ(error_of(mutated(good, [](Json& j) { j["groups"][0]["tests"][0]["positions"][0] = 0; })),
            "x.json: groups[0].tests[0].positions[0]: expected a tuple of 3 positions, got 0");
}

// input_dtype: inputs are values of the input dtype, expected values of dtype; the key
// round-trips; a file without it reads as before.
TEST(Reader, InputDtypeChecksInputsAndRoundTrips) {
  const std::string good = small_file("half-f32-base10000");
  const std::string f16_spec = mutated(good, [](Json& j) { j["groups"][0]["spec"]["input_dtype"] = "f16"; });
  // The suite's f32 inputs are (almost surely) not all f16 values.
  EXPECT_NE(error_of(f16_spec).find("groups[0].tests[0].input"), std::string::npos) << error_of(f16_spec);
  const std::string f16_inputs = mutated(f16_spec, [](Json& j) {
    for (auto& v : j["groups"][0]["tests"][0]["input"]) {
      v = reference::to_hex(static_cast<double>(reference::round_to_format(*reference::parse_hex(v.get<std::string>()), Dtype::f16)));
    }
  });
  ASSERT_EQ(error_of(f16_inputs), "");
  const GoldenFile file = parse_golden(f16_inputs, "x.json");
  EXPECT_EQ(file.groups[0].spec.input_dtype, Dtype::f16);
  EXPECT_EQ(file.groups[0].spec.dtype, Dtype::f32);
  EXPECT_EQ(write_golden(parse_golden(write_golden(file), "y.json")), write_golden(file));
  EXPECT_NE(write_golden(file).find("\"input_dtype\""), std::string::npos);
  EXPECT_EQ(parse_golden(good, "x.json").groups[0].spec.input_dtype, std::nullopt);
}

TEST(Reader, ChecksAttentionShapes) {
  const std::string good = small_file("attention");
  ASSERT_EQ(error_of(good), "");
  EXPECT_EQ(error_of(mutated(good, [](Json& j) { j["groups"][0]["tests"][0]["shape"]["v_dim"] = 9; })).rfind(
                "x.json: groups[0].tests[0].v: expected an array of ", 0),
            0u);
  EXPECT_EQ(error_of(mutated(good, [](Json& j) { j["groups"][0]["tests"][0]["causal"] = "yes"; })),
            "x.json: groups[0].tests[0].causal: expected true or false, got \"yes\"");
}

// Shapes whose element count overflows int64 (or is merely huge) are refused from the numbers
// alone, before any value is read or allocated.
TEST(Reader, RefusesHugeShapesWithoutAllocating) {
  const std::string good = small_file("half-f32-base10000");
  const std::int64_t big = std::int64_t{1} << 31;
  EXPECT_EQ(error_of(mutated(good, [&](Json& j) { j["groups"][0]["tests"][0]["shape"] = Json::array({big, big, 64}); })),
            "x.json: groups[0].tests[0].shape: expected a shape of at most 268435456 elements, got more");
  EXPECT_EQ(error_of(mutated(good, [&](Json& j) { j["groups"][0]["tests"][0]["shape"][0] = big + 1; })),
            "x.json: groups[0].tests[0].shape[0]: expected an integer in [1, 2147483648], got 2147483649");
  EXPECT_EQ(error_of(mutated(good, [&](Json& j) {
              j["groups"][0]["tests"][0]["shape"][0] = std::numeric_limits<std::uint64_t>::max();
            })),
            "x.json: groups[0].tests[0].shape[0]: expected an integer in [1, 2147483648], got 18446744073709551615");
}

TEST(Reader, RefusesDeepNestingBeforeParsing) {
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  EXPECT_EQ(error_of(deep), "x.json: byte 16: expected nesting at most 16 deep, got deeper");
  const std::string deep_object = "{\"notes\": " + std::string(100, '[');
  EXPECT_NE(error_of(deep_object), "");
}

// Truncations and byte corruptions of a valid file: the reader either accepts the text or throws
// GoldenError — never another exception, never a crash (ASan/UBSan builds run this too).
TEST(Reader, NeverThrowsAnythingElseOnCorruptedInput) {
  const std::string good = small_file("attention");
  std::mt19937 random(7);
  int rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text = good;
    if (i % 3 == 0) {
      text.resize(random() % text.size());
    } else {
      const int edits = 1 + static_cast<int>(random() % 4);
      for (int e = 0; e < edits; ++e) {
        text[random() % text.size()] = static_cast<char>(i % 3 == 1 ? "0123456789.,:[]{}\"-xpe"[random() % 22] : random());
      }
    }
    try {
      parse_golden(text, "fuzz.json");
    } catch (const GoldenError&) {
      ++rejected;
    } catch (const std::exception& e) {
      FAIL() << "non-GoldenError exception: " << e.what();
    }
  }
  EXPECT_GT(rejected, 2000);  // truncations alone are a third, and each one is invalid JSON
}

TEST(Reader, ReportsAnUnreadableFile) {
  try {
    read_golden_file("/nonexistent/ropecheck/x.json");
    FAIL() << "expected a GoldenError";
  } catch (const GoldenError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("/nonexistent/ropecheck/x.json: expected a readable file, got ", 0), 0u);
  }
}

// Every block path of this binary and CPU: the portable rounds always, SHA-NI where available (a
// CPU without it says so: the test of that path is reported skipped, never silently passed).
std::vector<Sha256::Path> sha256_paths() {
  std::vector<Sha256::Path> paths = {Sha256::Path::portable};
  if (Sha256::available(Sha256::Path::sha_ni)) paths.push_back(Sha256::Path::sha_ni);
  return paths;
}

// SHA-256 of FIPS 180-4's example messages (their digests as published with the standard: NIST
// "Secure Hashing" examples, SHA256.pdf), whole and fed in uneven pieces, on every block path.
TEST(Sha256, FipsExampleDigests) {
  const std::pair<std::string, std::string> examples[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {std::string(1000000, 'a'), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
  };
  for (const Sha256::Path path : sha256_paths()) {
    const int p = static_cast<int>(path);
    for (const auto& [message, digest] : examples) {
      Sha256 whole(path);
      whole.update(message);
      EXPECT_EQ(whole.finish(), "sha256:" + digest) << message.size() << " bytes, path " << p;
      Sha256 pieces(path);
      for (std::size_t at = 0, step = 1; at < message.size(); at += step, step = step * 3 % 97 + 1) {
        pieces.update(std::string_view(message).substr(at, step));
      }
      EXPECT_EQ(pieces.finish(), "sha256:" + digest) << message.size() << " bytes in pieces, path " << p;
    }
  }
}

// The SHA-NI blocks against the portable rounds on random messages of every length around the
// block and padding boundaries (0..200 bytes) and a few long ones, fed whole and in pieces; and
// the default path is the fastest available one.
TEST(Sha256, ShaNiGivesThePortableDigest) {
  EXPECT_EQ(Sha256::fastest(), Sha256::available(Sha256::Path::sha_ni) ? Sha256::Path::sha_ni : Sha256::Path::portable);
  EXPECT_TRUE(Sha256::available(Sha256::Path::portable));
  if (!Sha256::available(Sha256::Path::sha_ni)) {
    EXPECT_THROW(Sha256{Sha256::Path::sha_ni}, std::invalid_argument);
    GTEST_SKIP() << "this CPU or build has no SHA-NI path: only the portable rounds are tested";
  }
  std::mt19937_64 rng(2026);
  std::vector<std::size_t> lengths;
  for (std::size_t n = 0; n <= 200; ++n) lengths.push_back(n);
  for (std::size_t n : {4095, 4096, 4097, 65536 + 55, 1000003}) lengths.push_back(n);
  for (const std::size_t n : lengths) {
    std::string message(n, '\0');
    for (char& c : message) c = static_cast<char>(rng() & 0xff);
    Sha256 portable(Sha256::Path::portable), sha_ni(Sha256::Path::sha_ni), pieces(Sha256::Path::sha_ni);
    portable.update(message);
    sha_ni.update(message);
    for (std::size_t at = 0, step = 1; at < n; at += step, step = step * 7 % 131 + 1) pieces.update(std::string_view(message).substr(at, step));
    const std::string want = portable.finish();
    ASSERT_EQ(sha_ni.finish(), want) << n << " bytes";
    ASSERT_EQ(pieces.finish(), want) << n << " bytes in pieces";
  }
}

// A JSON and its sidecar are one pair by the sidecar's hash (golden/README.md "Sidecar"): the pair
// whose hash was recorded by an independent SHA-256 (Python's hashlib) loads; the same JSON naming
// a hash of other bytes is refused, one line naming both files.
TEST(Sidecar, ThePairIsCheckedByTheSidecarsHash) {
  const std::string dir = std::string(ROPECHECK_GOLDEN_TEST_DATA) + "/";
  GoldenFile paired = read_golden_file(dir + "sidecar_paired.json");
  ASSERT_FALSE(paired.sidecar_sha256.empty());
  RopeTest& test = paired.groups.at(0).rope_tests.at(0);
  load_arrays(paired, paired.groups[0].spec, test);
  EXPECT_EQ(test.input, (std::vector<double>{1, 0, 0, 1}));
  EXPECT_NE(write_golden(paired).find(paired.sidecar_sha256), std::string::npos);  // written back

  GoldenFile other = read_golden_file(dir + "sidecar_other_hash.json");
  RopeTest& other_test = other.groups.at(0).rope_tests.at(0);
  try {
    load_arrays(other, other.groups[0].spec, other_test);
    ADD_FAILURE() << "a sidecar of another hash was read";
  } catch (const GoldenError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("sidecar_other_hash.json: sidecar.sha256: expected "), std::string::npos) << message;
    EXPECT_NE(message.find("sidecar_other.safetensors"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  // A hash that is not one is refused where it is read.
  std::string text = write_golden(paired);
  text.replace(text.find(paired.sidecar_sha256), paired.sidecar_sha256.size(), "sha256:abc");
  EXPECT_THROW(parse_golden(text, "short.json"), GoldenError);
}

}  // namespace
}  // namespace ropecheck::golden
