// SHA-256 blocks with the x86 SHA extensions (Intel 64 and IA-32 Architectures Software Developer's
// Manual, vol. 2: SHA256RNDS2, SHA256MSG1, SHA256MSG2). Built with -msha -msse4.1 (this file only);
// Sha256 calls it only where CPUID says the CPU has SHA, SSSE3 and SSE4.1 (golden/sha256.cpp).
//
// The state lives in two registers in the order the instructions use, dword 3 down to dword 0:
// ABEF = (a, b, e, f) and CDGH = (c, d, g, h); the comments below list dwords 0 to 3. sha256rnds2(cdgh, abef, wk) does rounds t and t+1
// with W[t] + K[t] and W[t+1] + K[t+1] from wk's dwords 0 and 1 and returns the new (a, b, e, f);
// the new (c, d, g, h) is the old (a, b, e, f), so the two registers swap roles every call.
#include <immintrin.h>

#include "golden/sha256_blocks.h"

namespace ropecheck::golden::detail {
namespace {

// FIPS 180-4 §4.2.2, four to a register (K[4i] in dword 0).
alignas(16) constexpr std::uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
    0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
    0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
    0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

}  // namespace

void sha256_blocks_sha_ni(std::uint32_t state[8], const unsigned char* p, std::size_t blocks) {
  // The message words are big-endian: each dword's four bytes reversed.
  const __m128i byte_swap = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
  // state[0..3] = (a, b, c, d) and state[4..7] = (e, f, g, h) in dwords 0..3, into ABEF and CDGH.
  const __m128i abcd = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state));
  const __m128i efgh = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4));
  const __m128i badc = _mm_shuffle_epi32(abcd, 0xb1);  // dwords (b, a, d, c)
  const __m128i hgfe = _mm_shuffle_epi32(efgh, 0x1b);  // dwords (h, g, f, e)
  __m128i abef = _mm_alignr_epi8(badc, hgfe, 8);       // dwords (f, e, b, a)
  __m128i cdgh = _mm_blend_epi16(hgfe, badc, 0xf0);    // dwords (h, g, d, c)
  for (; blocks > 0; --blocks, p += 64) {
    const __m128i abef_in = abef, cdgh_in = cdgh;
    __m128i w[16];  // w[i]: W[4i .. 4i + 3] (FIPS 180-4 §6.2.2 step 1)
    for (int i = 0; i < 4; ++i) w[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i)), byte_swap);
    for (int i = 4; i < 16; ++i) {
      // W[t] = σ1(W[t−2]) + W[t−7] + σ0(W[t−15]) + W[t−16] for t = 4i .. 4i + 3: msg1 adds the σ0
      // terms to W[t−16], alignr gives W[t−7 .. t−4], and msg2 adds σ1 of W[t−2], W[t−1] and then
      // of the two words it has just made.
      const __m128i partial = _mm_add_epi32(_mm_sha256msg1_epu32(w[i - 4], w[i - 3]), _mm_alignr_epi8(w[i - 1], w[i - 2], 4));
      w[i] = _mm_sha256msg2_epu32(partial, w[i - 1]);
    }
    for (int i = 0; i < 16; ++i) {
      __m128i wk = _mm_add_epi32(w[i], _mm_load_si128(reinterpret_cast<const __m128i*>(kRound + 4 * i)));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);  // rounds 4i, 4i + 1: cdgh holds the new (a, b, e, f)
      wk = _mm_shuffle_epi32(wk, 0x0e);              // W + K of rounds 4i + 2, 4i + 3 into dwords 0, 1
      abef = _mm_sha256rnds2_epu32(abef, cdgh, wk);  // and back: abef holds (a, b, e, f) again
    }
    abef = _mm_add_epi32(abef, abef_in);  // H(i) = H(i−1) + the block's working variables
    cdgh = _mm_add_epi32(cdgh, cdgh_in);
  }
  const __m128i out_abef = _mm_shuffle_epi32(abef, 0x1b);  // dwords (a, b, e, f)
  const __m128i out_ghcd = _mm_shuffle_epi32(cdgh, 0xb1);  // dwords (g, h, c, d)
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), _mm_blend_epi16(out_abef, out_ghcd, 0xf0));     // (a, b, c, d)
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), _mm_alignr_epi8(out_ghcd, out_abef, 8));  // (e, f, g, h)
}

}  // namespace ropecheck::golden::detail
