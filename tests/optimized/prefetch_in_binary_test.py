"""The kernels' prefetch of the next token is in the compiled library, for every SIMD ISA.

A prefetch has no effect a test of values can see, and a compiler may drop it: GCC 12 at -O3 found
the binary32 rotation's prefetch (reached through a lambda, __builtin_prefetch) to be a const call
and deleted it, so the 16-bit kernels ran without one while the documents said they prefetched
(optimized/kernel-inl.h prefetch_line; bench/README.md "Prefetching the next token"). This test
disassembles the kernel library and asserts that every head rotation of the AVX2 and AVX-512
kernels — rotate_heads_binary32 (16-bit data on the fly) and rotate_tensor_row (binary64: f32,
f64, the cache mode) — holds at least one prefetch instruction.

usage: prefetch_in_binary_test.py OBJDUMP LIBRARY   (exit 77: no objdump, skipped)
"""
import re
import shutil
import subprocess
import sys

SIMD_NAMESPACES = ("avx2_isa", "avx512_isa", "avx512bf16_isa")
ROTATIONS = ("rotate_heads_binary32<", "rotate_tensor_row<")


def functions_with_prefetches(objdump, library):
    """{demangled function name: number of prefetch instructions} over the library's code."""
    listing = subprocess.run([objdump, "-d", "-C", "--no-show-raw-insn", library], check=True,
                             capture_output=True, text=True).stdout
    counts = {}
    name = None
    for line in listing.splitlines():
        header = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if header:
            name = header.group(1)
            counts.setdefault(name, 0)
        elif name is not None and re.search(r"\tprefetch", line):
            counts[name] += 1
    return counts


def main():
    objdump, library = sys.argv[1], sys.argv[2]
    if shutil.which(objdump) is None:
        print(f"objdump not found ({objdump}): install binutils; prefetch check skipped")
        return 77
    counts = functions_with_prefetches(objdump, library)
    failures = []
    for namespace in SIMD_NAMESPACES:
        prefix = f"ropecheck::kernels::{namespace}::"
        in_namespace = [f for f in counts if prefix in f]
        if not in_namespace:
            print(f"{namespace}: not compiled into {library} (this build's compiler lacks it)")
            continue
        for rotation in ROTATIONS:
            found = [f for f in in_namespace if prefix + rotation in f]
            if not found:
                failures.append(f"{namespace}: no {rotation[:-1]} function in {library} (inlined "
                                "elsewhere? point this test at the function that rotates the heads)")
            for f in found:
                if counts[f] == 0:
                    failures.append(f"{namespace}: no prefetch instruction in {f[:160]}")
            print(f"{namespace}: {rotation[:-1]}: {len(found)} instantiations, "
                  f"{sum(counts[f] for f in found)} prefetch instructions")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
