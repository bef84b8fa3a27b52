// The gate runs as root in other people's CI, so it must never crash, hang, grow without
// bound, or destroy a file, whatever it is given. Each test feeds `ropecheck` one hostile thing —
// a FIFO, a device node, a symbolic link, deep JSON, zip bombs, a header of 80 000 tensors, plugins
// that fork, hang, write far out of bounds or map 64 GiB, names that are not UTF-8 — and checks the
// promise: a one-line error and exit 2 (or an honest verdict), within a time limit, in bounded memory,
// with every file that was there unchanged. Everything is written in the test's own temporary
// folder; the real /dev is never touched (a device node is made there with mknod where permitted).
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "tests/gate/gate_test_support.h"
#include "tests/gate/rope_recipe.h"

extern char** environ;

namespace ropecheck::gate {
namespace {

using namespace testing;
namespace fs = std::filesystem;

const std::string kBin = ROPECHECK_BIN;
const std::string kData = ROPECHECK_MALFORMED_DIR;

struct Outcome {
  bool exited = false;
  int code = -1;
  bool killed_by_test = false;  // ran past its time limit
  double seconds = 0;
  double cpu_seconds = 0;  // user + system
  long max_rss_kb = 0;
  std::string out, err;
};

// Waits for child `pid`, started at `start`, killing it after `limit_s` seconds; its exit, time, CPU
// time and peak RSS into `o`.
void wait_for(pid_t pid, std::chrono::steady_clock::time_point start, double limit_s, Outcome& o) {
  int status = 0;
  rusage usage{};
  for (;;) {
    const pid_t r = ::wait4(pid, &status, WNOHANG, &usage);
    if (r == pid) break;
    if (std::chrono::steady_clock::now() - start > std::chrono::duration<double>(limit_s)) {
      ::kill(pid, SIGKILL);
      ::wait4(pid, &status, 0, &usage);
      o.killed_by_test = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  o.exited = WIFEXITED(status);
  o.code = o.exited ? WEXITSTATUS(status) : -1;
  o.max_rss_kb = usage.ru_maxrss;
  o.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                  static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

// Runs ropecheck with `args` (no shell: names may hold any byte), stdout and stderr into files of
// `dir`; killed after `limit_s` seconds, so a hang fails the test instead of stalling it. fork, not
// posix_spawn: a child sharing this process's memory until exec (vfork) would report this
// process's peak RSS as its own.
Outcome ropecheck(const std::vector<std::string>& args, const TempDir& dir, double limit_s = 60) {
  const std::string out_path = dir / "stdout.txt", err_path = dir / "stderr.txt";
  std::vector<std::string> words = {kBin};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  Outcome o;
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) return o;
  if (pid == 0) {
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0 || ::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(127);
    ::execve(kBin.c_str(), argv.data(), environ);
    ::_exit(127);
  }
  wait_for(pid, start, limit_s, o);
  o.out = slurp(out_path);
  o.err = slurp(err_path);
  return o;
}

// Runs `body` in a forked child of this test (exit 0 when it returns, 1 when it throws), killed
// after `limit_s` seconds and measured as ropecheck() measures a command: a library call that might
// take hours fails the test instead of stalling it.
Outcome in_child(const std::function<void()>& body, double limit_s) {
  Outcome o;
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) return o;
  if (pid == 0) {
    try {
      body();
    } catch (...) {
      ::_exit(1);
    }
    ::_exit(0);
  }
  wait_for(pid, start, limit_s, o);
  return o;
}

std::string describe(const Outcome& o) {
  std::ostringstream s;
  s << (o.killed_by_test ? "killed after its time limit" : o.exited ? "exit " + std::to_string(o.code) : "died by a signal")
    << " after " << o.seconds << " s (" << o.cpu_seconds << " s of CPU), peak RSS " << o.max_rss_kb << " KB\nstdout: " << o.out.substr(0, 2000)
    << "\nstderr: " << o.err.substr(0, 2000);
  return s.str();
}

// Exit 2 with exactly one line on stderr that contains `text`.
void expect_one_line_error(const Outcome& o, const std::string& text) {
  EXPECT_FALSE(o.killed_by_test) << describe(o);
  EXPECT_EQ(o.code, 2) << describe(o);
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << describe(o);
  EXPECT_NE(o.err.find(text), std::string::npos) << "expected '" << text << "' in\n" << describe(o);
}

std::string file_type(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return "nothing";
  if (S_ISREG(st.st_mode)) return "regular file";
  if (S_ISFIFO(st.st_mode)) return "FIFO";
  if (S_ISCHR(st.st_mode)) return "character device";
  if (S_ISLNK(st.st_mode)) return "symbolic link";
  if (S_ISDIR(st.st_mode)) return "folder";
  return "other";
}

const std::string kGolden = kData + "/valid/golden.json";
const std::string kCandidate = kData + "/valid/candidate.safetensors";

// ---- files the gate writes ------------------------------------------------------------------------

// Every writer, with {out} for the path it writes.
std::vector<std::vector<std::string>> writers(const TempDir& dir) {
  {
    // The whole search (shard 0/1): a merge refuses a lone shard 0/2 before it looks at --out.
    nlohmann::json whole = nlohmann::json::parse(slurp(kData + "/valid/report_seed1.json"));
    whole["shards"] = nlohmann::json::array({{{"index", 0}, {"count", 1}}});
    spit(dir / "report.json", whole.dump());
  }
  return {
      {"check", "--golden", kGolden, "--candidate", kCandidate, "--json", "{out}"},
      {"check", "--golden", kGolden, "--candidate", kCandidate, "--junit", "{out}"},
      {"check", "--golden", kGolden, "--candidate", kCandidate, "--html", "{out}"},
      {"run", "--impl", "reference", "--golden", kGolden, "--json", "{out}"},
      {"sweep", "--impl", "reference", "--spec", "head_dim=4,dtype=f32", "--max-position", "3", "--samples", "1", "--json", "{out}"},
      {"fuzz", "--impl", "reference", "--spec", "head_dim=4", "--trials", "1", "--json", "{out}"},
      {"report", "merge", dir / "report.json", "--out", "{out}"},
      {"golden", "export", "--golden", kGolden, "--format", "npz", "--out", "{out}", "--force"},
  };
}

std::vector<std::string> with_out(std::vector<std::string> args, const std::string& out) {
  for (std::string& a : args) {
    if (a == "{out}") a = out;
  }
  return args;
}

// `ropecheck fuzz ... --json /dev/null` run as root replaced the machine's /dev/null with a file:
// no writer replaces anything but a regular file — not a FIFO, not a device, not a symbolic link.
TEST(HostileTargets, NoWriterReplacesAFifoADeviceOrALink) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0644), 0);
  spit(dir / "kept.json", "kept\n");
  ASSERT_EQ(::symlink((dir / "kept.json").c_str(), (dir / "link").c_str()), 0);
  std::vector<std::pair<std::string, std::string>> targets = {{"fifo", "FIFO"}, {"link", "symbolic link"}};
  // A character device like /dev/null (1, 3), made in the test's folder where this process may.
  if (::mknod((dir / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) targets.push_back({"null", "character device"});
  else std::cerr << "mknod not permitted here: the device-node target is not tested\n";
  for (const auto& args : writers(dir)) {
    for (const auto& [name, kind] : targets) {
      const Outcome o = ropecheck(with_out(args, dir / name), dir, 60);
      SCOPED_TRACE(args[0] + " " + args[1] + " onto " + kind);
      expect_one_line_error(o, "report path: expected a regular file or a new name, got a " + kind);
      EXPECT_EQ(file_type(dir / name), kind);
    }
  }
  EXPECT_EQ(slurp(dir / "kept.json"), "kept\n");
  // golden generate --force replaces NAME.json files only when they are regular files.
  fs::create_directories(dir / "suites");
  ASSERT_EQ(::mkfifo((dir / "suites/interleaved-f64-base10000.json").c_str(), 0644), 0);
  expect_one_line_error(
      ropecheck({"golden", "generate", "--suite", "interleaved-f64-base10000", "--out", dir / "suites", "--force"}, dir, 120),
      "got a FIFO");
  EXPECT_EQ(file_type(dir / "suites/interleaved-f64-base10000.json"), "FIFO");
}

// `golden export --out existing.npz` overwrote silently while `golden generate` refused: both
// replace an existing file only with --force.
TEST(HostileTargets, ExportReplacesAnExistingFileOnlyWithForce) {
  TempDir dir;
  spit(dir / "mine.npz", "precious");
  const std::vector<std::string> args = {"golden", "export", "--golden", kGolden, "--format", "npz", "--out", dir / "mine.npz"};
  expect_one_line_error(ropecheck(args, dir), "expected a new file, got an existing one (use --force to replace it)");
  EXPECT_EQ(slurp(dir / "mine.npz"), "precious");
  std::vector<std::string> forced = args;
  forced.push_back("--force");
  const Outcome o = ropecheck(forced, dir);
  EXPECT_EQ(o.code, 0) << describe(o);
  EXPECT_EQ(slurp(dir / "mine.npz").substr(0, 2), "PK");
}

// A *.json report written into the --golden folder would be read as a suite by the next run.
TEST(HostileTargets, NoJsonReportInsideTheGoldenFolder) {
  TempDir dir;
  fs::create_directories(dir / "suites");
  fs::copy_file(kGolden, dir / "suites/tiny.json");
  expect_one_line_error(ropecheck({"check", "--golden", dir / "suites", "--candidate", kCandidate, "--json", dir / "suites/r.json"}, dir),
                        "expected a file outside the golden folder");
  EXPECT_FALSE(fs::exists(dir / "suites/r.json"));
  // An HTML page there is never read as a suite: allowed; and no temporary file is left behind.
  const Outcome o = ropecheck({"check", "--golden", dir / "suites", "--candidate", kCandidate, "--html", dir / "suites/r.html"}, dir);
  EXPECT_EQ(o.code, 0) << describe(o);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir / "suites"), fs::directory_iterator()), 2);
}

// ---- inputs that are not regular files --------------------------------------------------------

// `check --candidate FIFO` blocked forever; a FIFO, a device or a folder given as an input is
// refused at once with one line.
TEST(HostileInputs, FifosDevicesAndFoldersAreRefusedAtOnce) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0644), 0);
  fs::create_directories(dir / "folder");
  std::vector<std::pair<std::string, std::string>> inputs = {{"fifo", "a FIFO"}, {"folder", "a folder"}};
  if (::mknod((dir / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) inputs.push_back({"null", "a character device"});
  for (const auto& [name, kind] : inputs) {
    SCOPED_TRACE(name);
    const std::string path = dir / name;
    expect_one_line_error(ropecheck({"check", "--golden", kGolden, "--candidate", path}, dir, 20),
                          path + ": file: expected a regular file, got " + kind);
    expect_one_line_error(ropecheck({"apply", "--spec", "head_dim=4,dtype=f32", "--positions", "1", "--input", path}, dir, 20),
                          path + ": file: expected a regular file, got " + kind);
    expect_one_line_error(ropecheck({"report", "merge", path, "--out", dir / "merged.json"}, dir, 20),
                          path + ": file: expected a regular file, got " + kind);
    expect_one_line_error(ropecheck({"run", "--plugin", path, "--golden", kGolden}, dir, 20), "--plugin: expected an existing shared library, got " + kind);
    if (name == "folder") continue;  // a folder of suites is a valid --golden
    expect_one_line_error(ropecheck({"golden", "verify", path}, dir, 20), "expected a golden file or a folder of them, got " + kind);
    expect_one_line_error(ropecheck({"check", "--golden", path, "--candidate", kCandidate}, dir, 20), "--golden: expected an existing golden file or folder");
  }
  EXPECT_FALSE(fs::exists(dir / "merged.json"));
}

// Symbolic-link loops (and, when not root, unreadable folders) as inputs gave exit 3
// ("internal error: filesystem error"); an inline --input longer than a file name did too.
TEST(HostileInputs, NamesThatCannotBeLookedUpAreInputErrors) {
  TempDir dir;
  ASSERT_EQ(::symlink("loop", (dir / "loop").c_str()), 0);
  const std::string loop = dir / "loop";
  expect_one_line_error(ropecheck({"apply", "--spec", "head_dim=4,dtype=f32", "--positions", "1", "--input", loop}, dir),
                        "Too many levels of symbolic links");
  expect_one_line_error(ropecheck({"check", "--golden", kGolden, "--candidate", loop}, dir), "Too many levels of symbolic links");
  expect_one_line_error(ropecheck({"run", "--plugin", loop, "--golden", kGolden}, dir), "Too many levels of symbolic links");
  // A loop inside a --golden folder is no suite: the folder's real suites are judged.
  fs::create_directories(dir / "suites");
  fs::copy_file(kGolden, dir / "suites/tiny.json");
  ASSERT_EQ(::symlink("loop.json", (dir / "suites/loop.json").c_str()), 0);
  const Outcome folder = ropecheck({"check", "--golden", dir / "suites", "--candidate", kCandidate}, dir);
  EXPECT_EQ(folder.code, 0) << describe(folder);
  const Outcome verify = ropecheck({"golden", "lint", dir / "suites"}, dir);
  EXPECT_EQ(verify.code, 0) << describe(verify);
  // One token of head_dim 128 inline: 128 values, far longer than a file name may be.
  std::string values;
  for (int i = 0; i < 128; ++i) values += (i ? "," : "") + std::string("0x1.123456p-1");
  ASSERT_GT(values.size(), 255u);
  const Outcome inline_input = ropecheck({"apply", "--spec", "head_dim=128,dtype=f32", "--positions", "1", "--input", values}, dir);
  EXPECT_EQ(inline_input.code, 0) << describe(inline_input);
  EXPECT_EQ(std::count(inline_input.out.begin(), inline_input.out.end(), '\n'), 128);
  if (::geteuid() != 0) {  // root reads any folder
    fs::create_directories(dir / "closed");
    spit(dir / "closed/input.json", "[1, 0, 0, 0]");
    ::chmod((dir / "closed").c_str(), 0);
    expect_one_line_error(ropecheck({"apply", "--spec", "head_dim=4,dtype=f32", "--positions", "1", "--input", dir / "closed/input.json"}, dir),
                          "Permission denied");
    ::chmod((dir / "closed").c_str(), 0755);
  }
}

// ---- deep JSON --------------------------------------------------------------------------------

// JSON nested 50 000 deep as `apply --input`, or a 200 000-deep value in a candidate, overflowed
// the stack (a recursive flatten, nlohmann's dump()); every JSON reader bounds the nesting first.
TEST(HostileInputs, DeepJsonIsRefusedBeforeAnyRecursion) {
  TempDir dir;
  spit(dir / "deep_input.json", std::string(50000, '[') + "1" + std::string(50000, ']'));
  expect_one_line_error(ropecheck({"apply", "--spec", "head_dim=2,dtype=f64", "--positions", "1", "--input", dir / "deep_input.json"}, dir),
                        "deep_input.json: byte 64: expected JSON nested at most 64 deep, got deeper");
  spit(dir / "deep_candidate.json",
       "{\"tiny/1/output\": [1, 0, 0.5, -0.25], \"implementation\": " + std::string(200000, '[') + std::string(200000, ']') + "}");
  expect_one_line_error(ropecheck({"check", "--golden", kGolden, "--candidate", dir / "deep_candidate.json"}, dir),
                        "expected JSON nested at most 64 deep");
  const std::string header = "{\"a/b\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  std::string st(8, '\0');
  for (int i = 0; i < 8; ++i) st[static_cast<std::size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  spit(dir / "deep.safetensors", st + header);
  expect_one_line_error(ropecheck({"check", "--golden", kGolden, "--candidate", dir / "deep.safetensors"}, dir),
                        "expected JSON nested at most 64 deep");
  spit(dir / "deep_report.json", "{\"schema\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  expect_one_line_error(ropecheck({"report", "merge", dir / "deep_report.json", "--out", dir / "m.json"}, dir),
                        "expected JSON nested at most 64 deep");
}

// ---- zip bombs --------------------------------------------------------------------------------

std::string le(std::uint64_t v, int bytes) {
  std::string s;
  for (int i = 0; i < bytes; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

std::string raw_deflate(const std::string& data) {
  z_stream z{};
  deflateInit2(&z, 9, Z_DEFLATED, -MAX_WBITS, 9, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// A zip of one deflated member at offset 0, listed in the central directory under every name of
// `names`, each declaring `declared` uncompressed bytes.
std::string zip_bomb(const std::string& member, std::uint32_t crc, std::uint64_t declared, const std::vector<std::string>& names) {
  const std::string compressed = raw_deflate(member);
  std::string zip = le(0x04034b50, 4) + le(20, 2) + le(0, 2) + le(8, 2) + le(0, 4) + le(crc, 4) + le(compressed.size(), 4) +
                    le(declared, 4) + le(names[0].size(), 2) + le(0, 2) + names[0] + compressed;
  std::string central;
  for (const std::string& name : names) {
    central += le(0x02014b50, 4) + le(20, 2) + le(20, 2) + le(0, 2) + le(8, 2) + le(0, 4) + le(crc, 4) +
               le(compressed.size(), 4) + le(declared, 4) + le(name.size(), 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 2) +
               le(0, 4) + le(0, 4) + name;
  }
  return zip + central + le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(names.size(), 2) + le(names.size(), 2) +
         le(central.size(), 4) + le(zip.size(), 4) + le(0, 2);
}

std::string npy_f8_header(std::uint64_t count) {
  std::string h = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + std::to_string(count) + ",), }";
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  return std::string("\x93NUMPY\x01\x00", 8) + le(h.size(), 2) + h;
}

// A 2 MB .npz declaring ~1000x its size, and 16 central entries sharing one 100 MB member (a 98 KB
// file), are refused before inflating: the memory a reader takes is bounded by the file, not by
// what it declares.
TEST(HostileInputs, ZipBombsAreRefusedInBoundedMemory) {
  TempDir dir;
  {  // built in a scope of their own: freed before ropecheck runs (a forked child starts at our RSS)
    std::string noise(2 << 20, '\0');
    std::uint64_t state = 1;
    for (char& c : noise) c = static_cast<char>((state = state * 6364136223846793005ULL + 1442695040888963407ULL) >> 56);
    const auto crc_of = [](const std::string& s) {
      return static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
    };
    spit(dir / "ratio.npz", zip_bomb(noise, crc_of(noise), raw_deflate(noise).size() * 1000, {"tiny/1/output.npy"}));
    const std::uint64_t count = (100u << 20) / 8;
    const std::string zeros = npy_f8_header(count) + std::string(count * 8, '\0');
    std::vector<std::string> names;
    for (int i = 0; i < 16; ++i) names.push_back("m" + std::to_string(i) + ".npy");
    spit(dir / "shared.npz", zip_bomb(zeros, crc_of(zeros), zeros.size(), names));
  }
  ASSERT_LT(fs::file_size(dir / "shared.npz"), 200000u);
  const struct {
    const char* file;
    const char* error;
  } bombs[] = {{"ratio.npz", "(a zip bomb?)"}, {"shared.npz", "(overlapping members)"}};
  // A forked child's peak RSS starts at this process's RSS (large under a sanitizer's quarantine):
  // the bombs are measured against the same command on a valid candidate.
  const Outcome baseline = ropecheck({"check", "--golden", kGolden, "--candidate", kCandidate}, dir);
  ASSERT_EQ(baseline.code, 0) << describe(baseline);
  for (const auto& bomb : bombs) {
    SCOPED_TRACE(bomb.file);
    const Outcome o = ropecheck({"check", "--golden", kGolden, "--candidate", dir / bomb.file}, dir);
    expect_one_line_error(o, bomb.error);
    // The file itself is at most 2 MB; the bombs claimed 2 GB and 1.6 GB.
    EXPECT_LT(o.max_rss_kb, baseline.max_rss_kb + 64 * 1024) << describe(o) << "\nbaseline: " << describe(baseline);
  }
}

// ---- inputs too big to take, refused from their first bytes ------------------------------------

// Sparse files of 4 GiB (no disk used): `apply --input` of a 4 GiB .npy was read whole and ended in
// exit 3; `check` read a candidate or input of no format it streams (garbage) whole before looking
// at it. Each is refused from its header or first bytes, in the memory of a small run.
TEST(HostileInputs, FourGibInputsAreRefusedFromTheirFirstBytes) {
  TempDir dir;
  const std::uint64_t count = std::uint64_t{1} << 29;  // 4 GiB of f8 values
  spit(dir / "big.npy", npy_f8_header(count));
  fs::resize_file(dir / "big.npy", fs::file_size(dir / "big.npy") + count * 8);
  spit(dir / "garbage.bin", "this is no tensor file");
  fs::resize_file(dir / "garbage.bin", std::uint64_t{1} << 32);
  std::string small = npy_f8_header(8);
  for (int i = 0; i < 8; ++i) small += le(0x3ff0000000000000ULL, 8);  // 1.0
  spit(dir / "small.npy", small);
  // The baseline: the same command on small files (a forked child's peak RSS starts at ours).
  std::vector<std::string> good = {"check", "--spec", "head_dim=4,base=10000,dtype=f64", "--positions", "0,1"};
  for (const std::string& a : std::vector<std::string>{"--input", dir / "small.npy", "--candidate", dir / "small.npy"}) good.push_back(a);
  const Outcome baseline = ropecheck(good, dir);
  ASSERT_TRUE(baseline.code == 0 || baseline.code == 1) << describe(baseline);
  const struct {
    std::vector<std::string> args;
    const char* error;
  } cases[] = {
      {{"apply", "--spec", "head_dim=4,base=10000,dtype=f64", "--positions", "0", "--input", dir / "big.npy"},
       "big.npy: shape: expected at most 2^26 values (apply --input), got 536870912"},
      {{"check", "--golden", kGolden, "--candidate", dir / "garbage.bin"}, "garbage.bin: format: expected a .npz, .npy, safetensors or JSON"},
      {{"check", "--spec", "head_dim=4,base=10000,dtype=f64", "--positions", "0,1", "--input", dir / "small.npy", "--candidate",
        dir / "garbage.bin"},
       "garbage.bin: format: expected a .npz, .npy, safetensors or JSON"},
      {{"check", "--spec", "head_dim=4,base=10000,dtype=f64", "--positions", "0,1", "--input", dir / "garbage.bin", "--candidate",
        dir / "small.npy"},
       "garbage.bin: format: expected a .npz, .npy, safetensors or JSON"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args[0] + " " + c.args.back());
    const Outcome o = ropecheck(c.args, dir);
    expect_one_line_error(o, c.error);
    EXPECT_LT(o.max_rss_kb, baseline.max_rss_kb + 64 * 1024) << describe(o) << "\nbaseline: " << describe(baseline);
  }
}

// ---- parsing in linear time -------------------------------------------------------------------

// Headers of tens of thousands of tensors and candidate JSON of as many object values parse in
// time linear in the text (base/checked_json.h; a callback parser that scans the parent object once
// per closed child is quadratic: bench/README.md "Linear JSON").
TEST(HostileInputs, LargeHeadersAreParsedInLinearTime) {
  TempDir dir;
  std::string header = "{";
  constexpr int kTensors = 80000;
  for (int i = 0; i < kTensors; ++i) {
    header += (i ? ",\"s/" : "\"s/") + std::to_string(i) + "/output\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[" +
              std::to_string(4 * i) + "," + std::to_string(4 * i + 4) + "]}";
  }
  header += "}";
  spit(dir / "many.safetensors", le(header.size(), 8) + header + std::string(4 * kTensors, '\0'));
  // Metadata keys whose values are objects: each closed object made nlohmann scan its parent.
  std::string values = "{";
  for (int i = 0; i < kTensors; ++i) values += (i ? ",\"m" : "\"m") + std::to_string(i) + "\":{}";
  spit(dir / "many.json", values + "}");
  for (const char* file : {"many.safetensors", "many.json"}) {
    SCOPED_TRACE(file);
    const Outcome o = ropecheck({"check", "--golden", kGolden, "--candidate", dir / file}, dir, 120);
    EXPECT_FALSE(o.killed_by_test) << describe(o);
    EXPECT_EQ(o.code, 1) << describe(o);  // read, then judged: test tiny/1 has no usable output
    EXPECT_LT(o.seconds, 10) << describe(o);
  }
}

// A golden suite of many small tests kept in a sidecar (golden/README.md "Sidecar") is read and
// written in time linear in its tests: the sidecar is opened and its header parsed once per file
// (golden/sidecar.h SidecarLoader), and the header is built without a key search per insert
// (tensorio/writers.cpp safetensors_header); quadratic, 8 times as many tests would take 64 times
// as long. Linear, each command here takes a few seconds of CPU (one pair per
// position keeps the exact reference's multiprecision work, the bulk of verify, run and check,
// small). The limits tell linear from quadratic and are no speed target: 60 s of CPU per command,
// and a kill after 180 s of wall time on a loaded machine.
constexpr double kLinearCpuSeconds = 60, kLinearWallSeconds = 180;

bool expect_linear(const Outcome& o, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_FALSE(o.killed_by_test) << describe(o);
  EXPECT_EQ(o.code, 0) << describe(o);
  EXPECT_LT(o.cpu_seconds, kLinearCpuSeconds) << describe(o);
  return !o.killed_by_test && o.code == 0;
}

TEST(HostileInputs, SidecarSuitesOfManyTestsAreLinear) {
  TempDir dir;
  // 32768 tests of one token, 32 heads of head_dim 2: 2^21 values, above the sidecar threshold 2^20.
  constexpr std::int64_t kTests = 32768, kHeads = 32, kHeadDim = 2;
  const std::string suite = dir / "many.json", sidecar = dir / "many.safetensors", candidate = dir / "candidate.safetensors";
  auto command = [&](const std::vector<std::string>& args) {
    return expect_linear(ropecheck(args, dir, kLinearWallSeconds), args.front() + " " + args[1]);
  };
  ASSERT_TRUE(command({"golden", "generate", "--spec", "layout=half,head_dim=2,base=10000,dtype=f32", "--positions",
                       "0:" + std::to_string(kTests), "--tokens", "1", "--heads", std::to_string(kHeads), "--out", suite}));
  ASSERT_TRUE(fs::exists(sidecar)) << "expected a sidecar beside " << suite;
  const TensorMap arrays = parse_safetensors(slurp(sidecar), sidecar);
  // Every test's input, positions and expected values, and the suite and spec as metadata.
  ASSERT_EQ(arrays.size(), static_cast<std::size_t>(3 * kTests + 2));
  command({"golden", "lint", suite});
  command({"golden", "verify", suite});
  if (command({"run", "--impl", "reference", "--golden", suite, "--json", dir / "run.json"})) {
    EXPECT_EQ(nlohmann::json::parse(slurp(dir / "run.json"))["groups"][0]["tests"], kTests);
  }

  // check: a candidate of an independent recipe (tests/gate/rope_recipe.h) for every test.
  testing_recipe::Recipe recipe;
  recipe.head_dim = recipe.rotary_dim = kHeadDim;
  std::vector<OutTensor> outputs;
  for (std::int64_t id = 1; id <= kTests; ++id) {
    const std::string name = "many/" + std::to_string(id) + "/";
    const Tensor& input = arrays.at(name + "input");
    const Tensor& positions = arrays.at(name + "positions");
    const std::vector<std::int64_t> p(positions.values.begin(), positions.values.end());
    outputs.push_back({name + "output", "F32", input.shape, testing_recipe::rotate(recipe, p, kHeads, input.values), {}});
  }
  spit(candidate, encode_safetensors(outputs));
  if (command({"check", "--golden", suite, "--candidate", candidate, "--json", dir / "check.json"})) {
    EXPECT_EQ(nlohmann::json::parse(slurp(dir / "check.json"))["groups"][0]["tests"], kTests);
  }
}

// The header of a sidecar of 2^20 tensors (a suite of 349 525 tests): quadratic, the key searches
// alone would be 2^39 string comparisons; 32768 tests above are too few to tell them from the
// linear work, 2^20 tensors are enough.
TEST(HostileInputs, SafetensorsHeaderOfManyTensorsIsLinear) {
  const Outcome o = in_child(
      [] {
        std::vector<TensorLayout> layouts;
        for (std::int64_t i = 0; i < (std::int64_t{1} << 20); ++i) {
          layouts.push_back({"many/" + std::to_string(i / 3 + 1) + "/" + std::to_string(i % 3), "F32", {1, 32, 2}});
        }
        if (safetensors_header(layouts, {{"suite", "many"}}).size() < layouts.size() * 60) throw std::logic_error("short header");
      },
      kLinearWallSeconds);
  expect_linear(o, "safetensors_header of 2^20 tensors");
}

// ---- plugins ------------------------------------------------------------------------------------

struct PluginFixture : ::testing::Test {
  TempDir dir;
  std::string golden_path = dir / "small.json";
  void SetUp() override { spit(golden_path, golden::write_golden(small_golden())); }
  nlohmann::json report(const std::string& name = "report.json") { return nlohmann::json::parse(slurp(dir / name)); }
};

bool process_ended(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;  // gone
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';  // killed, not yet reaped
}

// A plugin that forked a lingering child left a stray process (one fuzz trial left 25): each child
// process runs in its own process group, and the group is killed whenever the child stops.
TEST_F(PluginFixture, ForkingPluginLeavesNoProcessBehind) {
  const std::string pid_file = dir / "pids.txt";
  ::setenv("ROPECHECK_TEST_PID_FILE", pid_file.c_str(), 1);
  const Outcome run = ropecheck({"run", "--plugin", plugin("fork"), "--golden", golden_path, "--timeout", "5"}, dir);
  const Outcome fuzz = ropecheck({"fuzz", "--plugin", plugin("fork"), "--spec", "layout=interleaved,head_dim=8,base=10000,dtype=f32",
                                  "--trials", "1", "--timeout", "5"},
                                 dir);
  ::unsetenv("ROPECHECK_TEST_PID_FILE");
  EXPECT_EQ(run.code, 0) << describe(run);
  EXPECT_TRUE(fuzz.code == 0 || fuzz.code == 1) << describe(fuzz);
  std::ifstream in(pid_file);
  int lingering = 0, forked = 0;
  for (pid_t pid = 0; in >> pid;) {
    ++forked;
    // SIGKILL ends a process asynchronously: one killed as the gate exits may still be on its way
    // out (on a loaded machine, for milliseconds). A lingering one (pause() forever) is still
    // there a second later.
    for (int wait = 0; wait < 100 && !process_ended(pid); ++wait) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!process_ended(pid)) {
      ++lingering;
      ::kill(pid, SIGKILL);  // the test's own cleanup: this process was forked for it
    }
  }
  EXPECT_GE(forked, 7);
  EXPECT_EQ(lingering, 0) << "of " << forked << " processes the plugin forked";
}

// `fuzz --plugin` on a plugin that always hangs: after 3 consecutive timeouts no further call is
// made and the search stops (runner/isolation.h kCircuitBreakerTimeouts), instead of every trial's
// call timing out.
TEST_F(PluginFixture, AlwaysHangingPluginTripsTheCircuitBreaker) {
  const Outcome fuzz = ropecheck({"fuzz", "--plugin", plugin("hang_always"), "--timeout", "0.5", "--trials", "2", "--json", dir / "fuzz.json"}, dir, 60);
  EXPECT_EQ(fuzz.code, 1) << describe(fuzz);
  EXPECT_LT(fuzz.seconds, 15) << describe(fuzz);
  const nlohmann::json j = report("fuzz.json");
  EXPECT_NE(j["stopped_reason"].get<std::string>().find("3 consecutive calls timed out"), std::string::npos) << j.dump();
  EXPECT_GT(j["violation_counts"]["status"].get<std::int64_t>(), 0);
  EXPECT_NE(fuzz.out.find("stopped early: 3 consecutive calls timed out"), std::string::npos) << fuzz.out;
  // run: every test fails as a timeout, the later ones without a call; the report says why.
  const Outcome run = ropecheck({"run", "--plugin", plugin("hang_always"), "--golden", golden_path, "--timeout", "0.5", "--json", dir / "run.json"}, dir, 60);
  EXPECT_EQ(run.code, 1) << describe(run);
  EXPECT_LT(run.seconds, 15) << describe(run);
  const nlohmann::json r = report("run.json");
  EXPECT_EQ(failed_tests(r).size(), 7u);
  bool noted = false;
  for (const auto& note : r["notes"]) noted = noted || note.get<std::string>().find("circuit breaker") != std::string::npos;
  EXPECT_TRUE(noted) << r["notes"].dump();
}

// A plugin that writes 64 bytes at +256 past its output, beyond 64 guard bytes: the output ends at
// protected pages; the write is that test's `guard` failure, and the run goes on.
TEST_F(PluginFixture, WriteFarPastTheOutputIsAGuardFailure) {
  const Outcome o = ropecheck({"run", "--plugin", plugin("far_write"), "--golden", golden_path, "--timeout", "5", "--json", dir / "report.json"}, dir);
  EXPECT_EQ(o.code, 1) << describe(o);
  const nlohmann::json j = report();
  EXPECT_EQ(failed_tests(j), (std::set<std::int64_t>{3}));
  ASSERT_FALSE(j["groups"][0]["worst_cases"].empty());
  EXPECT_EQ(j["groups"][0]["worst_cases"][0]["kind"], "guard");
  EXPECT_NE(o.out.find("protected pages"), std::string::npos) << o.out;
}

// No memory limit on the child: a plugin could take all the machine's memory. The child's address
// space is limited (--memory-limit, default 4096 MiB more than it starts with): the plugin's 64 GiB
// mapping is refused (it then reports an error status); with --memory-limit 0 it is not.
TEST_F(PluginFixture, MemoryLimitBoundsThePluginsAddressSpace) {
  const Outcome limited = ropecheck({"run", "--plugin", plugin("hog"), "--golden", golden_path, "--json", dir / "report.json"}, dir);
  EXPECT_EQ(limited.code, 1) << describe(limited);
  EXPECT_EQ(failed_tests(report()), (std::set<std::int64_t>{3}));
  const Outcome unlimited = ropecheck({"run", "--plugin", plugin("hog"), "--golden", golden_path, "--memory-limit", "0"}, dir);
  EXPECT_EQ(unlimited.code, 0) << describe(unlimited);
  expect_one_line_error(ropecheck({"run", "--plugin", plugin("hog"), "--golden", golden_path, "--memory-limit", "-1"}, dir),
                        "--memory-limit");
}

// A name that is not UTF-8 (a plugin's resolved name, a candidate's or a golden file's name) made
// the JSON report fail (nlohmann type_error.316) and no report was written at all.
TEST_F(PluginFixture, NamesThatAreNotUtf8StillGiveJsonReports) {
  const Outcome run = ropecheck({"run", "--plugin", plugin("bad_name"), "--golden", golden_path, "--json", dir / "run.json"}, dir);
  EXPECT_EQ(run.code, 0) << describe(run);
  EXPECT_NE(report("run.json")["implementation"].get<std::string>().find("tiny\xEF\xBF\xBD"), std::string::npos);
  const std::string odd_golden = dir / "g\xff.json", odd_candidate = dir / "c\xfe.safetensors";
  fs::copy_file(kGolden, odd_golden);
  fs::copy_file(kCandidate, odd_candidate);
  const Outcome check = ropecheck({"check", "--golden", odd_golden, "--candidate", odd_candidate, "--json", dir / "check.json",
                                   "--junit", dir / "check.xml", "--html", dir / "check.html"},
                                  dir);
  EXPECT_EQ(check.code, 0) << describe(check);
  EXPECT_EQ(report("check.json")["candidate"], dir / "c\xEF\xBF\xBD.safetensors");
  const Outcome fuzz = ropecheck({"fuzz", "--plugin", plugin("bad_name"), "--spec", "layout=interleaved,head_dim=8,base=10000,dtype=f32",
                                  "--trials", "1", "--json", dir / "fuzz.json"},
                                 dir);
  EXPECT_EQ(fuzz.code, 0) << describe(fuzz);
  EXPECT_NE(report("fuzz.json")["implementation"].get<std::string>().find("\xEF\xBF\xBD"), std::string::npos);
}

}  // namespace
}  // namespace ropecheck::gate
