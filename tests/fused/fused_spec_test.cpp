// The fused spec (fused/fused.h): parsing, canonical printing, refusals naming the key; FP8 codes.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "fused/fp8.h"
#include "fused/fused.h"
#include "tensorio/readers.h"

namespace ropecheck::fused {
namespace {

TEST(FusedSpec, DefaultsWithoutFusedKeys) {
  const FusedSpec s = parse_fused_spec("layout=half,head_dim=8,base=10000,dtype=bf16");
  EXPECT_EQ(s.norm, NormPlace::none);
  EXPECT_EQ(s.fp8, Fp8::none);
  EXPECT_EQ(s.eps, "1e-6");
  EXPECT_EQ(s.rope.head_dim, 8);
  EXPECT_EQ(s.rope.dtype, Dtype::bf16);
  EXPECT_FALSE(has_fused_keys("layout=half,head_dim=8,base=10000,dtype=bf16"));
}

TEST(FusedSpec, EveryKeyParsedAnyOrder) {
  const FusedSpec s = parse_fused_spec(
      "norm=before, head_dim=128,layout=half,norm_weight=one_plus,eps=1e-5,fp8=e5m2,saturate=false,scale=per_head,"
      "scale_value=0.5,rounding=intermediate,destination=paged,block_size=32,q_heads=8,k_heads=2,dtype=bf16");
  EXPECT_EQ(s.norm, NormPlace::before);
  EXPECT_EQ(s.weight, NormWeight::one_plus);
  EXPECT_EQ(s.eps, "1e-5");
  EXPECT_EQ(s.fp8, Fp8::e5m2);
  EXPECT_FALSE(s.saturate);
  EXPECT_EQ(s.scale, ScaleMode::per_head);
  EXPECT_EQ(s.scale_value, "0.5");
  EXPECT_EQ(s.rounding, Rounding::intermediate);
  EXPECT_EQ(s.destination, Destination::paged);
  EXPECT_EQ(s.block_size, 32);
  EXPECT_EQ(s.q_heads, 8);
  EXPECT_EQ(s.k_heads, 2);
  EXPECT_EQ(s.rope.layout, Layout::half);
  EXPECT_TRUE(has_fused_keys("head_dim=8, fp8 =e4m3"));
}

TEST(FusedSpec, CanonicalRoundTrip) {
  for (const char* text : {"head_dim=4", "layout=half,head_dim=128,dtype=bf16,norm=after,fp8=e4m3,scale=per_token",
                           "head_dim=64,rotary_dim=32,norm=before,norm_weight=one_plus,eps=0,destination=paged,block_size=1"}) {
    const FusedSpec s = parse_fused_spec(text);
    EXPECT_EQ(parse_fused_spec(to_string(s)), s) << text;
    EXPECT_EQ(to_string(parse_fused_spec(to_string(s))), to_string(s));
  }
  EXPECT_EQ(to_string(parse_fused_spec("head_dim=4,fp8=e4m3,q_heads=2")),
            "layout=interleaved,head_dim=4,rotary_dim=4,base=10000,dtype=f32,direction=forward,scaling=none,"
            "norm=none,norm_weight=plain,eps=1e-6,fp8=e4m3,saturate=true,scale=fixed,scale_value=1,rounding=once,"
            "destination=contiguous,block_size=16,q_heads=2,k_heads=1");
}

// Each refusal is an InputError whose message names the key.
void expect_refused(const std::string& text, const std::string& key) {
  try {
    (void)parse_fused_spec(text);
    ADD_FAILURE() << text << ": accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'" + key + "'"), std::string::npos) << text << ": " << e.what();
  }
}

TEST(FusedSpec, RefusalsNameTheKey) {
  expect_refused("head_dim=8,norm=sideways", "norm");
  expect_refused("head_dim=8,norm_weight=1+w", "norm_weight");
  expect_refused("head_dim=8,eps=-1e-6", "eps");
  expect_refused("head_dim=8,eps=abc", "eps");
  expect_refused("head_dim=8,fp8=e3m4", "fp8");
  expect_refused("head_dim=8,saturate=yes", "saturate");
  expect_refused("head_dim=8,fp8=e4m3,scale=per_block", "scale");
  expect_refused("head_dim=8,scale=per_token", "scale");  // no fp8: nothing returns a scale
  expect_refused("head_dim=8,scale_value=0", "scale_value");
  expect_refused("head_dim=8,scale_value=inf", "scale_value");
  expect_refused("head_dim=8,rounding=twice", "rounding");
  expect_refused("head_dim=8,destination=ring", "destination");
  expect_refused("head_dim=8,block_size=0", "block_size");
  expect_refused("head_dim=8,q_heads=-1", "q_heads");
  expect_refused("head_dim=8,k_heads=99999", "k_heads");
  expect_refused("head_dim=8,norm=before,norm=after", "norm");
  expect_refused("head_dim=3,norm=before", "rotary_dim");  // the rotation's own checks still apply
}

TEST(Fp8, CodesAndValues) {
  // E4M3FN (OCP): 0x7e = 1.110b·2^8 = 448 the largest, 0x7f NaN, 0x01 = 2^-9, 0x08 = 2^-6.
  EXPECT_EQ(decode_fp8(0x7e, Fp8::e4m3), 448.0);
  EXPECT_TRUE(std::isnan(decode_fp8(0x7f, Fp8::e4m3)));
  EXPECT_EQ(decode_fp8(0x01, Fp8::e4m3), std::ldexp(1.0, -9));
  EXPECT_EQ(decode_fp8(0x08, Fp8::e4m3), std::ldexp(1.0, -6));
  EXPECT_EQ(decode_fp8(0xb8, Fp8::e4m3), -1.0);
  // E5M2: 0x7b = 1.11b·2^15 = 57344, 0x7c +Inf, 0x01 = 2^-16.
  EXPECT_EQ(decode_fp8(0x7b, Fp8::e5m2), 57344.0);
  EXPECT_TRUE(std::isinf(decode_fp8(0x7c, Fp8::e5m2)));
  EXPECT_EQ(decode_fp8(0x01, Fp8::e5m2), std::ldexp(1.0, -16));
  for (int c = 0; c < 256; ++c) {
    for (Fp8 f : {Fp8::e4m3, Fp8::e5m2}) {
      const double v = decode_fp8(static_cast<std::uint8_t>(c), f);
      if (std::isnan(v)) continue;
      EXPECT_EQ(encode_fp8(v, f), v == 0 ? (c & 0x80) : c) << c;
      EXPECT_TRUE(is_fp8_value(v, f));
    }
  }
}

TEST(Fp8, QuantizationTiesAndOverflow) {
  // E4M3 around 1: spacing 1/8; 1 + 1/16 is a tie to the even 1, 1 + 3/16 to 1.25.
  EXPECT_EQ(quantize_fp8(1.0625, Fp8::e4m3, true), 1.0);
  EXPECT_EQ(quantize_fp8(1.1875, Fp8::e4m3, true), 1.25);
  EXPECT_EQ(quantize_fp8(1.07, Fp8::e4m3, true), 1.125);
  // Past 448: 464 ties to 448 (gappa/fp8_e4m3.g), just above is NaN without saturation, 448 with it.
  EXPECT_EQ(quantize_fp8(464.0, Fp8::e4m3, false), 448.0);
  EXPECT_TRUE(std::isnan(quantize_fp8(464.5, Fp8::e4m3, false)));
  EXPECT_EQ(quantize_fp8(464.5, Fp8::e4m3, true), 448.0);
  EXPECT_EQ(quantize_fp8(-1e6, Fp8::e4m3, true), -448.0);
  // E5M2: 61440 ties to 65536, past the largest: +Inf without saturation.
  EXPECT_EQ(quantize_fp8(61439.0, Fp8::e5m2, false), 57344.0);
  EXPECT_TRUE(std::isinf(quantize_fp8(61440.0, Fp8::e5m2, false)));
  EXPECT_EQ(quantize_fp8(61440.0, Fp8::e5m2, true), 57344.0);
  // Subnormals: E4M3 spacing 2^-9; 2^-10 ties to 0, 3·2^-10 to 2^-8.
  EXPECT_EQ(quantize_fp8(std::ldexp(1.0, -10), Fp8::e4m3, true), 0.0);
  EXPECT_EQ(quantize_fp8(3 * std::ldexp(1.0, -10), Fp8::e4m3, true), std::ldexp(1.0, -8));
}

// A .npy file of format 1.0 with `descr` and the raw little-endian `data` (header padded to 64 bytes).
std::string npy(const std::string& descr, const std::string& shape, const std::string& data) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

TEST(FusedFiles, UnsignedCodesReadOnlyWhereAsked) {
  // FP8 codes as uint8 and bf16 bits as uint16 (`ropecheck fused`): widened as integers when
  // accepted; every other reader refuses them as before.
  const std::string codes = npy("|u1", "(3,)", std::string("\x7e\x38\xb8", 3));
  const tensorio::Tensor t = tensorio::parse_npy_tensor(codes, "q_out.npy", tensorio::UnsignedCodes::accepted);
  EXPECT_EQ(t.dtype, "U8");
  ASSERT_EQ(t.values.size(), 3u);
  EXPECT_EQ(t.values[0], 126.0);
  EXPECT_EQ(decode_fp8(static_cast<std::uint8_t>(t.values[0]), Fp8::e4m3), 448.0);
  EXPECT_EQ(decode_fp8(static_cast<std::uint8_t>(t.values[2]), Fp8::e4m3), -1.0);
  const std::string bits = npy("<u2", "(2,)", std::string("\x80\x3f\x00\xc0", 4));  // bf16 1.0, -2.0
  const tensorio::Tensor b = tensorio::parse_npy_tensor(bits, "k_out.npy", tensorio::UnsignedCodes::accepted);
  EXPECT_EQ(b.dtype, "U16");
  EXPECT_EQ(b.values[0], 0x3f80);
  EXPECT_EQ(b.values[1], 0xc000);
  EXPECT_THROW((void)tensorio::parse_npy_tensor(codes, "q_out.npy"), InputError);
}

}  // namespace
}  // namespace ropecheck::fused
