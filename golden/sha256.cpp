#include "golden/sha256.h"

#include <fcntl.h>
#include <unistd.h>

#if defined(ROPECHECK_HAVE_SHA_NI)
#include <cpuid.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "golden/sha256_blocks.h"
#include "tensorio/readers.h"

namespace ropecheck::golden {
namespace {

using detail::kSha256Round;

constexpr std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

// CPUID leaf 1 ECX: SSSE3 (bit 9), SSE4.1 (bit 19); leaf 7 subleaf 0 EBX: SHA (bit 29) — Intel SDM
// vol. 2, CPUID. The SHA-NI blocks use all three.
bool cpu_has_sha_ni() {
#if defined(ROPECHECK_HAVE_SHA_NI)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
  const bool ssse3 = (ecx >> 9) & 1, sse41 = (ecx >> 19) & 1;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
  return ssse3 && sse41 && ((ebx >> 29) & 1);
#else
  return false;
#endif
}

}  // namespace

namespace detail {

void sha256_blocks_portable(std::uint32_t state[8], const unsigned char* p, std::size_t blocks) {
  for (; blocks > 0; --blocks, p += 64) {
    std::uint32_t w[64];
    for (int i = 0; i < 16; ++i) {
      w[i] = std::uint32_t{p[4 * i]} << 24 | std::uint32_t{p[4 * i + 1]} << 16 | std::uint32_t{p[4 * i + 2]} << 8 | p[4 * i + 3];
    }
    for (int i = 16; i < 64; ++i) {
      const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4], f = state[5], g = state[6], h = state[7];
    for (int i = 0; i < 64; ++i) {
      const std::uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kSha256Round[i] + w[i];
      const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    state[0] += a, state[1] += b, state[2] += c, state[3] += d, state[4] += e, state[5] += f, state[6] += g, state[7] += h;
  }
}

}  // namespace detail

bool Sha256::available(Path path) { return path == Path::portable || cpu_has_sha_ni(); }

Sha256::Path Sha256::fastest() { return available(Path::sha_ni) ? Path::sha_ni : Path::portable; }

Sha256::Sha256(Path path) : path_(path) {
  if (!available(path)) throw std::invalid_argument("Sha256: the SHA-NI path is not available on this CPU or build");
}

void Sha256::blocks(const unsigned char* p, std::size_t count) {
#if defined(ROPECHECK_HAVE_SHA_NI)
  if (path_ == Path::sha_ni) {
    detail::sha256_blocks_sha_ni(h_.data(), p, count);
    return;
  }
#endif
  detail::sha256_blocks_portable(h_.data(), p, count);
}

void Sha256::update(std::string_view bytes) {
  length_ += bytes.size();
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  std::size_t n = bytes.size();
  if (buffered_ > 0) {
    const std::size_t take = std::min(n, 64 - buffered_);
    std::memcpy(buffer_ + buffered_, p, take);
    buffered_ += take, p += take, n -= take;
    if (buffered_ < 64) return;
    blocks(buffer_, 1);
    buffered_ = 0;
  }
  blocks(p, n / 64);
  p += n / 64 * 64, n %= 64;
  std::memcpy(buffer_, p, n);
  buffered_ = n;
}

std::string Sha256::finish() {
  // FIPS 180-4 §5.1.1: a 1 bit, zeros to 56 bytes mod 64, the length in bits as 64-bit big-endian.
  const std::uint64_t bits = length_ * 8;
  unsigned char pad[72] = {0x80};
  const std::size_t zeros = (buffered_ < 56 ? 56 : 120) - buffered_;
  for (int i = 0; i < 8; ++i) pad[zeros + i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
  update(std::string_view(reinterpret_cast<const char*>(pad), zeros + 8));
  static const char* const kHex = "0123456789abcdef";
  std::string out = "sha256:";
  for (std::uint32_t v : h_) {
    for (int shift = 28; shift >= 0; shift -= 4) out += kHex[(v >> shift) & 0xf];
  }
  return out;
}

std::string sha256_of_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) throw tensorio::ReaderError(path + ": file: expected a readable file, got " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  Sha256 sha;
  std::vector<char> chunk(std::size_t{1} << 20);
  for (;;) {
    const ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw tensorio::ReaderError(path + ": file: expected a readable file, got " + std::strerror(errno));
    if (n == 0) break;
    sha.update(std::string_view(chunk.data(), static_cast<std::size_t>(n)));
  }
  return sha.finish();
}

}  // namespace ropecheck::golden
