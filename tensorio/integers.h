// Integer tensors read exactly (positions above 2^53 are not doubles): TensorFile::read widens
// every value to double, which rounds an int64 above 2^53 (2^53 + 1 read as 2^53).
#pragma once

#include <cstdint>
#include <vector>

#include "tensorio/readers.h"

namespace ropecheck::tensorio {

// Every value of `entry` (an I64 or I32 tensor of `file`) as stored. Throws ReaderError naming the
// file for another dtype or a file shorter than its header says.
std::vector<std::int64_t> read_integers(const TensorFile& file, const TensorFile::Entry& entry);

}  // namespace ropecheck::tensorio
