// Writers of the formats tensorio/readers.h reads: NumPy .npz (stored members, as np.savez
// writes them) and safetensors. `ropecheck golden export` uses them; the tests use them to build
// candidate files. Output is deterministic: no timestamps (zip times are the DOS epoch).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "spec/spec.h"

namespace ropecheck::tensorio {

// The stored dtype of values of `dtype` (safetensors' names; .npy/.npz write BF16 as '<f4').
std::string storage_dtype(Dtype dtype);

// One tensor to write. dtype: "F64", "F32", "F16", "BF16" (values must be exactly representable),
// "I64" (values integers), or "U" (text; npz: a 0-d '<U' array, safetensors: a __metadata__ entry).
struct OutTensor {
  std::string name;
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::vector<double> values;
  std::string text;
};

// A complete .npy file (format 1.0; header padded so the data starts at a multiple of 64 bytes).
// BF16 has no NumPy dtype: it is written as '<f4' (every bfloat16 value is a float32).
std::string encode_npy(const OutTensor& tensor);
// The header of such a file (everything before the data) for a numeric tensor of `dtype` ("F64",
// "F32", "F16", "I64"; BF16 values are written as "F32") and `shape`: a writer that produces the
// data in pieces writes it, then encode_values_to of each piece.
std::string npy_header(const std::string& dtype, const std::vector<std::int64_t>& shape);
// A zip archive of NAME.npy members, stored uncompressed, CRC-32 set.
std::string encode_npz(const std::vector<OutTensor>& tensors);
// A safetensors file: tensors in the given order, header padded with spaces to a multiple of 8.
std::string encode_safetensors(const std::vector<OutTensor>& tensors);

// A safetensors file written in pieces (a golden sidecar of gigabytes): the header first, for
// tensors whose data follow in the given order, each encode_values of its values.
struct TensorLayout {
  std::string name;
  std::string dtype;  // "F64", "F32", "F16", "BF16", "I64"
  std::vector<std::int64_t> shape;
};
std::string safetensors_header(const std::vector<TensorLayout>& tensors,
                               const std::vector<std::pair<std::string, std::string>>& metadata = {});
// Little-endian bytes of `values` in `dtype` (values must be exactly representable).
std::string encode_values(const std::string& dtype, const std::vector<double>& values);
// Bytes per value of `dtype`, and the same encoding into out[0 .. width·values.size()) (a slice of a
// buffer reused across tests, filled by several threads).
int encoded_width(const std::string& dtype);
void encode_values_to(const std::string& dtype, std::span<const double> values, char* out);

}  // namespace ropecheck::tensorio
