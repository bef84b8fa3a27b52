// The one grammar of --positions (gate/positions.h), used by apply, check --spec and golden
// generate: lists, multi-axis tuples, ranges, .npy and .json files, and the one-line refusal of
// everything else, naming --positions (or the file) and the expected form. Expected lists are
// written out by hand here.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <optional>

#include "base/errors.h"
#include "gate/positions.h"
#include "gate_test_support.h"

namespace ropecheck::gate {
namespace {

using namespace testing;
using V = std::vector<std::int64_t>;

const std::string kBin = ROPECHECK_BIN;

// The message of the UsageError (usage) or InputError (a file) that parse_positions_option throws,
// "" when it throws none.
template <class Error>
std::string refusal(const std::string& text, int components) {
  try {
    parse_positions_option(text, components);
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "";
}

void expect_refused(const std::string& text, int components, const std::vector<std::string>& words) {
  const std::string message = refusal<UsageError>(text, components);
  ASSERT_FALSE(message.empty()) << "'" << text << "' was accepted";
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(message.rfind("--positions", 0), 0u) << message;
  for (const std::string& w : words) EXPECT_NE(message.find(w), std::string::npos) << "no '" << w << "' in: " << message;
}

void expect_file_refused(const std::string& path, int components, const std::vector<std::string>& words) {
  const std::string message = refusal<InputError>(path, components);
  ASSERT_FALSE(message.empty()) << path << " was accepted";
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(message.rfind(path, 0), 0u) << message;
  for (const std::string& w : words) EXPECT_NE(message.find(w), std::string::npos) << "no '" << w << "' in: " << message;
}

TEST(Positions, ListsAndMultiAxisTuples) {
  EXPECT_EQ(parse_positions_option("3,5,8", 1), (V{3, 5, 8}));
  EXPECT_EQ(parse_positions_option("7", 1), (V{7}));
  EXPECT_EQ(parse_positions_option("3:5,4:5", 2), (V{3, 5, 4, 5}));
  EXPECT_EQ(parse_positions_option("1:2:3,4:5:6", 3), (V{1, 2, 3, 4, 5, 6}));
  // A single multi-axis token looks like a range: for a multi-axis spec it is the tuple.
  EXPECT_EQ(parse_positions_option("0:10", 2), (V{0, 10}));
}

TEST(Positions, RangesLikePythons) {
  EXPECT_EQ(parse_positions_option("0:5", 1), (V{0, 1, 2, 3, 4}));
  EXPECT_EQ(parse_positions_option("2:11:3", 1), (V{2, 5, 8}));
  EXPECT_EQ(parse_positions_option("2:12:3", 1), (V{2, 5, 8, 11}));
  EXPECT_EQ(parse_positions_option("5:6:100", 1), (V{5}));
  EXPECT_EQ(parse_positions_option("131070:131072", 1), (V{131070, 131071}));
}

TEST(Positions, MalformedListsAndRangesAreOneLineNamingTheForm) {
  expect_refused("", 1, {"expected"});
  expect_refused("4:4", 1, {"at least one"});  // an empty range: nothing to apply or judge
  expect_refused("0:10:0", 1, {"STEP", ">= 1", "0"});
  expect_refused("0:10:-2", 1, {"STEP", ">= 1", "-2"});
  expect_refused("10:5", 1, {"START <= STOP", "'10:5'"});
  expect_refused("1:2:3:4", 1, {"START:STOP[:STEP]", "'1:2:3:4'"});
  expect_refused("a:5", 1, {"integer", "'a'"});
  expect_refused("3,,5", 1, {"''"});
  expect_refused("3,x", 1, {"integer", "'x'"});
  expect_refused("1.5", 1, {"integer", "'1.5'"});
  expect_refused("99999999999999999999", 1, {"integer"});
  // Multi-axis: a range is no tuple of the right length; the message says ranges are 1-D only.
  expect_refused("0:10:2", 2, {"2 ':'-separated", "'0:10:2'", "range"});
  expect_refused("0:10", 3, {"3 ':'-separated", "'0:10'", "range"});
  expect_refused("1:2,3", 2, {"2 ':'-separated", "'3'"});
  // 1-D: a tuple in a list is not a position.
  expect_refused("1,2:3", 1, {"1 ':'-separated", "'2:3'"});
}

TEST(Positions, MoreThanTheLimitIsRefusedBeforeAllocating) {
  const std::string over = "0:" + std::to_string(kMaxPositions + 1);
  expect_refused(over, 1, {std::to_string(kMaxPositions), std::to_string(kMaxPositions + 1)});
  expect_refused("0:" + std::to_string(2 * kMaxPositions + 1) + ":2", 1, {std::to_string(kMaxPositions)});
  // The widest ranges: the count must not wrap around to a small number.
  expect_refused("-9223372036854775808:9223372036854775807", 1, {std::to_string(kMaxPositions)});
  expect_refused("-9223372036854775808:9223372036854775807:2", 1, {std::to_string(kMaxPositions)});
  expect_refused("-9223372036854775808:9223372036854775807:3", 1, {std::to_string(kMaxPositions)});
}

struct PositionFiles : ::testing::Test {
  TempDir dir;
  std::string npy(const std::string& name, const std::string& dtype, std::vector<std::int64_t> shape, const V& values) {
    std::vector<double> v(values.begin(), values.end());
    spit(dir / name, encode_npy({"", dtype, std::move(shape), v, {}}));
    return dir / name;
  }
  std::string json(const std::string& name, const std::string& text) {
    spit(dir / name, text);
    return dir / name;
  }
};

// encode_npy writes I64 as '<i8' through double; '<i4', and '<i8' of every int64 exactly, are
// written here byte by byte.
std::string int_npy(const V& values, int width) {
  std::string header =
      "{'descr': '<i" + std::to_string(width) + "', 'fortran_order': False, 'shape': (" + std::to_string(values.size()) + ",), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  for (std::int64_t v : values) {
    const auto u = width == 8 ? static_cast<std::uint64_t>(v) : static_cast<std::uint32_t>(static_cast<std::int32_t>(v));
    for (int i = 0; i < width; ++i) out += static_cast<char>((u >> (8 * i)) & 0xff);
  }
  return out;
}
std::string int32_npy(const V& values) { return int_npy(values, 4); }

TEST_F(PositionFiles, NpyAndJsonFiles) {
  EXPECT_EQ(parse_positions_option(npy("p.npy", "I64", {4}, {0, 7, 100, 131071}), 1), (V{0, 7, 100, 131071}));
  EXPECT_EQ(parse_positions_option(npy("p1.npy", "I64", {3, 1}, {4, 5, 6}), 1), (V{4, 5, 6}));
  EXPECT_EQ(parse_positions_option(npy("p2.npy", "I64", {2, 2}, {3, 5, 4, 5}), 2), (V{3, 5, 4, 5}));
  EXPECT_EQ(parse_positions_option(npy("p3.npy", "I64", {2, 3}, {1, 2, 3, 4, 5, 6}), 3), (V{1, 2, 3, 4, 5, 6}));
  spit(dir / "i32.npy", int32_npy({0, 1, 65536, 2147483647}));
  EXPECT_EQ(parse_positions_option(dir / "i32.npy", 1), (V{0, 1, 65536, 2147483647}));
  EXPECT_EQ(parse_positions_option(json("p.json", "[0, 2, 4]"), 1), (V{0, 2, 4}));
  EXPECT_EQ(parse_positions_option(json("p2.json", "[[3, 5], [4, 5]]"), 2), (V{3, 5, 4, 5}));
  EXPECT_EQ(parse_positions_option(json("obj.json", "{\"positions\": [9, 8]}"), 1), (V{9, 8}));
}

TEST_F(PositionFiles, BadFilesAreOneLineNamingTheFile) {
  expect_file_refused(npy("f32.npy", "F32", {3}, {1, 2, 3}), 1, {"descr", "integers", "F32"});
  expect_file_refused(npy("f64.npy", "F64", {3}, {1, 2, 3}), 1, {"descr", "integers"});
  expect_file_refused(npy("three.npy", "I64", {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), 2, {"shape", "[tokens, 2] or [2, tokens]", "[3, 3]"});
  expect_file_refused(npy("flat.npy", "I64", {4}, {1, 2, 3, 4}), 2, {"shape", "[tokens, 2]", "got [4]"});
  expect_file_refused(npy("cube.npy", "I64", {4, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), 3, {"shape", "[tokens, 3] or [3, tokens]"});
  expect_file_refused(json("float.json", "[1, 2.5]"), 1, {"integers"});
  expect_file_refused(json("string.json", "[1, \"2\"]"), 1, {"integers"});
  expect_file_refused(json("ragged.json", "[[1, 2], [3]]"), 2, {"rows of equal length"});
  expect_file_refused(json("wrong_rows.json", "[[1, 2, 3], [4, 5, 6], [7, 8, 9]]"), 2, {"shape", "[tokens, 2]"});
  expect_file_refused(json("object.json", "{\"p\": [1]}"), 1, {"positions", "array"});
  expect_file_refused(json("broken.json", "[1, 2"), 1, {"JSON array of integer positions"});
  expect_file_refused(json("empty_list.json", "[]"), 1, {"at least one"});
}

// Positions of an int64 .npy file are the integers stored, above 2^53 too (2^53 + 1 is no double:
// it was read as 2^53), up to the 2^62 every form accepts; beyond, refused naming the value exactly.
TEST_F(PositionFiles, NpyIntegersAreExactAbove2To53) {
  const std::int64_t p53 = std::int64_t{1} << 53, p62 = std::int64_t{1} << 62;
  spit(dir / "big.npy", int_npy({p53 + 1, p53 + 3, p62 - 1, p62}, 8));
  EXPECT_EQ(parse_positions_option(dir / "big.npy", 1), (V{p53 + 1, p53 + 3, p62 - 1, p62}));
  spit(dir / "over.npy", int_npy({0, p62 + 1}, 8));
  expect_file_refused(dir / "over.npy", 1, {"position", "2^62", "4611686018427387905"});
}

// AddressSanitizer reserves terabytes of shadow memory at start-up, which no address-space limit
// leaves room for: under it the 1 GiB cap below is not set (the exit code is still checked).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

// The token count of a range or a .npy file is known before any position is read: a command checks
// its sizes with it first (a 2^27-position file beside a 2-value input is not read).
TEST_F(PositionFiles, TokenCountsAreKnownBeforeReading) {
  EXPECT_EQ(positions_option_tokens("0:131072:8", 1), 16384);
  EXPECT_EQ(positions_option_tokens(npy("rows.npy", "I64", {4, 3}, V(12, 1)), 3), 4);
  EXPECT_EQ(positions_option_tokens("3,5,8", 1), std::nullopt);  // a list is read already
  EXPECT_EQ(positions_option_tokens(json("p.json", "[1, 2]"), 1), std::nullopt);
  // 2^27 int64 positions (1 GiB, sparse: no data written) beside 2 input values: refused by the
  // count under a 1 GiB address-space limit, which reading them (2.1 GB) cannot fit in.
  std::string header = "{'descr': '<i8', 'fortran_order': False, 'shape': (134217728,), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  spit(dir / "huge.npy", std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header);
  std::filesystem::resize_file(dir / "huge.npy", 10 + header.size() + (std::uint64_t{1} << 30));
  const std::string apply = kBin + " apply --spec layout=half,head_dim=2,base=10000,dtype=f32 --input 1,0.5 --positions ";
  for (const std::string& positions : {std::string(dir / "huge.npy"), std::string("0:134217728")}) {
    const Ran r = run((kAddressSanitizer ? "" : "ulimit -v 1048576; ") + apply + positions, dir);
    EXPECT_EQ(r.code, 2) << positions << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("--input: expected tokens*heads*head_dim values (tokens=134217728"), std::string::npos) << r.err;
  }
}

// An argument echoed in a message is cut: 100,000 characters are not printed back.
TEST(Positions, LongArgumentsAreEchoedCut) {
  // an integer too wide, a range's STOP, a list's item: each 99,998 characters
  for (const std::string& text : {std::string(99998, '9'), "1:" + std::string(99998, '9'), std::string(99998, 'x') + ",1"}) {
    const std::string message = refusal<UsageError>(text, 1);
    EXPECT_LT(message.size(), 300u) << message.substr(0, 300);
    EXPECT_NE(message.find("...' (99998 characters)"), std::string::npos) << message;  // the length of what is echoed
  }
}

// One rule decides where a token's components lie (components_axis), for the CLI's files and
// Python's arrays (tests/python/test_user_forms.py): [tokens, c], or Qwen2-VL's [c, tokens]
// (also [c, batch, tokens]) read as its transpose; one component: any shape, row-major.
TEST_F(PositionFiles, ComponentsFirstReadsAsItsTranspose) {
  const V rows{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};     // [4 tokens, 3 components]
  const V columns{1, 4, 7, 10, 2, 5, 8, 11, 3, 6, 9, 12};  // the same as [3, 4]
  EXPECT_EQ(parse_positions_option(npy("rows.npy", "I64", {4, 3}, rows), 3), rows);
  EXPECT_EQ(parse_positions_option(npy("columns.npy", "I64", {3, 4}, columns), 3), rows);
  EXPECT_EQ(parse_positions_option(npy("batch.npy", "I64", {3, 2, 2}, columns), 3), rows);  // [3, batch 2, tokens 2]
  EXPECT_EQ(parse_positions_option(json("columns.json", "[[1, 4, 7, 10], [2, 5, 8, 11], [3, 6, 9, 12]]"), 3), rows);
  // [c, c]: rows are tokens (as Python reads it).
  EXPECT_EQ(parse_positions_option(npy("square.npy", "I64", {2, 2}, {3, 5, 4, 5}), 2), (V{3, 5, 4, 5}));
  // One component: any shape, row-major ([batch, tokens], [tokens, 1]).
  EXPECT_EQ(parse_positions_option(npy("batch1.npy", "I64", {2, 2}, {1, 2, 3, 4}), 1), (V{1, 2, 3, 4}));
  EXPECT_EQ(parse_positions_option(npy("cube1.npy", "I64", {1, 1, 2}, {1, 2}), 1), (V{1, 2}));
  // The rule itself, as Python calls it.
  EXPECT_EQ(components_axis({4, 3}, 3, "p"), ComponentsAxis::last);
  EXPECT_EQ(components_axis({3, 4}, 3, "p"), ComponentsAxis::first);
  EXPECT_EQ(components_axis({3, 2, 5}, 3, "p"), ComponentsAxis::first);
  EXPECT_EQ(components_axis({3, 3}, 3, "p"), ComponentsAxis::last);
  EXPECT_EQ(components_axis({7, 1}, 1, "p"), ComponentsAxis::none);
  EXPECT_THROW(components_axis({12}, 3, "p"), InputError);
  EXPECT_THROW(components_axis({4, 4}, 3, "p"), InputError);
}

// HF transformers' [batch, heads, tokens, head_dim] has as many values as [tokens, heads, head_dim]:
// read row-major it would pair the wrong values with each position. heads_before_tokens names it.
TEST(TensorShapes, HeadsBeforeTokensIsNamedWithTheTranspose) {
  const std::string m = heads_before_tokens({1, 32, 128, 64}, 128, 64, "q.npy");
  EXPECT_EQ(m,
            "q.npy: shape [1, 32, 128, 64] reads as [batch, heads, tokens, head_dim] (HF transformers' layout; 128 tokens "
            "per sequence from the positions): expected [tokens, heads, head_dim] or [batch, tokens, heads, head_dim]; "
            "transpose it first (torch: x.transpose(1, 2), NumPy: np.swapaxes(x, 1, 2))");
  EXPECT_NE(heads_before_tokens({2, 32, 128, 64}, 256, 64, "q").find("[batch, heads, tokens, head_dim]"), std::string::npos);
  EXPECT_NE(heads_before_tokens({2, 32, 128, 64}, 128, 64, "q").find("x.transpose(1, 2)"), std::string::npos);
  EXPECT_NE(heads_before_tokens({32, 128, 64}, 128, 64, "q").find("x.transpose(0, 1)"), std::string::npos);
  // Shapes that read right, or whose order is the same either way, say nothing.
  EXPECT_EQ(heads_before_tokens({128, 32, 64}, 128, 64, "q"), "");
  EXPECT_EQ(heads_before_tokens({2, 128, 32, 64}, 256, 64, "q"), "");
  EXPECT_EQ(heads_before_tokens({2, 128, 32, 64}, 128, 64, "q"), "");  // positions per sequence (Python)
  EXPECT_EQ(heads_before_tokens({4, 32, 1, 64}, 4, 64, "q"), "");      // a decoding step
  EXPECT_EQ(heads_before_tokens({1, 1, 128, 64}, 128, 64, "q"), "");   // one head
  EXPECT_EQ(heads_before_tokens({1, 32, 128, 32}, 128, 64, "q"), "");  // not head_dim: the sizes say what is wrong
  EXPECT_EQ(heads_before_tokens({128 * 32 * 64}, 128, 64, "q"), "");
}

// apply --positions as a range, a .npy file (int32 and int64) and a .json file gives what the
// comma list gives; bad forms are exit 2 with one line.
TEST_F(PositionFiles, ApplyAgreesAcrossTheForms) {
  const std::string spec = " apply --spec layout=half,head_dim=4,base=10000,dtype=f32 --input ";
  std::vector<double> input;
  for (int i = 0; i < 16 * 4; ++i) input.push_back(0.125 * (i % 13) - 0.75);
  spit(dir / "in.npy", encode_npy({"", "F32", {16, 1, 4}, input, {}}));
  const std::string in = dir / "in.npy";
  V sixteen(16);
  std::iota(sixteen.begin(), sixteen.end(), 0);
  std::string list;
  for (std::int64_t p : sixteen) list += (list.empty() ? "" : ",") + std::to_string(p);
  const Ran by_list = run(kBin + spec + in + " --positions " + list, dir);
  ASSERT_EQ(by_list.code, 0) << by_list.err;
  EXPECT_EQ(std::count(by_list.out.begin(), by_list.out.end(), '\n'), 64);
  spit(dir / "i32.npy", int32_npy(sixteen));
  for (const std::string& form : {std::string("0:16"), npy("p.npy", "I64", {16}, sixteen), npy("p1.npy", "I64", {16, 1}, sixteen),
                                  dir / "i32.npy", json("p.json", nlohmann::json(sixteen).dump())}) {
    const Ran r = run(kBin + spec + in + " --positions " + form, dir);
    EXPECT_EQ(r.code, 0) << form << ": " << r.err;
    EXPECT_EQ(r.out, by_list.out) << form;
  }
  // A step: positions 0, 2, ..., 30 are not 0..15.
  const Ran stepped = run(kBin + spec + in + " --positions 0:32:2", dir);
  EXPECT_EQ(stepped.code, 0) << stepped.err;
  EXPECT_NE(stepped.out, by_list.out);
  for (const std::string& bad : {std::string("0:16:0"), std::string("16:0"), std::string("4:4"), std::string("''")}) {
    const Ran r = run(kBin + spec + in + " --positions " + bad, dir);
    EXPECT_EQ(r.code, 2) << bad << ": " << r.out << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("--positions"), std::string::npos) << bad << ": " << r.err;
  }
}

}  // namespace
}  // namespace ropecheck::gate
