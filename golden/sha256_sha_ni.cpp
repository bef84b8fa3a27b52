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
      __m128i wk = _mm_add_epi32(w[i], _mm_load_si128(reinterpret_cast<const __m128i*>(kSha256Round + 4 * i)));
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
