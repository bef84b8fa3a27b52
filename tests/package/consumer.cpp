// Uses the installed package: the exact reference and the C ABI header.
#include <cstdio>
#include <vector>

#include <ropecheck/kernel.h>

#include "reference/rope.h"

int main() {
  const ropecheck::Spec spec = ropecheck::parse_spec("layout=interleaved,head_dim=2,base=10000,dtype=f64");
  const std::vector<std::int64_t> positions = {1};
  const std::vector<double> input = {1.0, 0.0};
  const auto out = ropecheck::reference::apply(spec, {1, 1, 2}, positions, input);
  std::printf("abi %d, cos(1) = %a\n", static_cast<int>(ropecheck_kernel_abi_version()), out[0]);
  return out[0] == 0x1.14a280fb5068cp-1 ? 0 : 1;
}
