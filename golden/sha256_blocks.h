// The block functions behind Sha256 (golden/sha256.h), one per way of computing FIPS 180-4's
// compression: each takes the eight state words H0..H7 and `blocks` consecutive 64-byte blocks.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ropecheck::golden::detail {

// FIPS 180-4 §6.2.2 in portable C++: the message schedule and the 64 rounds, a word at a time.
void sha256_blocks_portable(std::uint32_t state[8], const unsigned char* p, std::size_t blocks);

#if defined(ROPECHECK_HAVE_SHA_NI)
// The same with the x86 SHA extensions (sha256rnds2: two rounds; sha256msg1/msg2: the schedule's
// σ0 and σ1 parts), compiled with -msha -msse4.1 in sha256_sha_ni.cpp; only where the CPU has them.
void sha256_blocks_sha_ni(std::uint32_t state[8], const unsigned char* p, std::size_t blocks);
#endif

}  // namespace ropecheck::golden::detail
