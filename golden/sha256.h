// SHA-256 (FIPS 180-4), streaming: the content hash that ties a golden file to its sidecar
// (golden/README.md "Sidecar"). Not for secrets: it detects a sidecar that is not the one its JSON
// was written with (regenerated, replaced, copied from another suite), not a forgery.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ropecheck::golden {

class Sha256 {
 public:
  // How the 64-byte blocks are compressed: FIPS 180-4's rounds in portable C++, or the x86 SHA
  // extensions (built where the compiler has them, used where CPUID reports them: bench/README.md
  // "SHA extensions"). Every path gives the same digest
  // (tests/golden/format_test.cpp).
  enum class Path { portable, sha_ni };
  // Whether `path` is built into this binary and runs on this CPU.
  static bool available(Path path);
  // The fastest available path: sha_ni where available, else portable.
  static Path fastest();

  Sha256() : Sha256(fastest()) {}
  // Throws std::invalid_argument when the path is not available.
  explicit Sha256(Path path);

  void update(std::string_view bytes);
  // "sha256:" and 64 lower-case hex digits. Ends the hash (update may not follow).
  std::string finish();

 private:
  void blocks(const unsigned char* p, std::size_t count);
  Path path_;
  std::array<std::uint32_t, 8> h_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  unsigned char buffer_[64] = {};
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;  // bytes
};

// The hash of the file at `path` ("sha256:HEX"), read in pieces. Throws tensorio::ReaderError
// naming the file when it cannot be read.
std::string sha256_of_file(const std::string& path);

}  // namespace ropecheck::golden
