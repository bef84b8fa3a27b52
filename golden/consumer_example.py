#!/usr/bin/python3
"""A consumer of ropecheck golden files in another language: numpy float64 RoPE, checked against a
suite's correctly rounded `expected` values within a stated error bound (golden/README.md).

Usage: consumer_example.py SUITE.json [SUITE.json...]
Handles unscaled, single-axis suites (scaling "none", no axes) in either layout and any dtype;
other groups are skipped and counted. Exit 0 when every checked value is within the bound.

The bound, per element of a rotated pair (x, y) with rho = sqrt(x^2 + y^2) at angle a = p*theta_j:
  |ours - expected| <= rho * (|a| * (ln(base) + 3) * 2^-53 + 2^-46) + 2^-1072 + ulp_dtype(expected) / 2
- theta_j = base ** (-2j/d) in float64: the exponent -2j/d is rounded (relative 2^-53, which
  becomes |ln theta_j| * 2^-53 <= ln(base) * 2^-53 in theta_j), pow adds <= 1 ulp (2^-52):
  relative error of theta_j <= (ln(base) + 2) * 2^-53;
- a = p * theta_j adds one rounding (2^-53): absolute angle error <= |a| * (ln(base) + 3) * 2^-53,
  which cos and sin inherit (their derivatives are bounded by 1);
- numpy's float64 cos/sin (<= 4 ulp, 2^-50) and the rotation x*c - y*s (two products and a
  difference, <= 3 * 2^-53 relative to |x| + |y| <= sqrt(2) * rho): together < 2^-46 * rho;
  in float64's subnormal range those three operations carry absolute errors instead (<= 2^-1075
  each): 2^-1072 covers them;
- `expected` is the exact result correctly rounded to the dtype: within half an ulp of it.
Non-finite expected values follow IEEE 754 arithmetic of the same formula, which numpy reproduces:
NaN must meet NaN; +-Inf must meet an infinity or, where the exact result overflowed the dtype, a
value of the same sign beyond the dtype's largest finite value (less the bound).
"""
import json
import math
import sys

import numpy as np

# dtype -> (significand bits p, exponent of the smallest normal, largest finite value)
FORMATS = {
    "f64": (53, -1022, float.fromhex("0x1.fffffffffffffp+1023")),
    "f32": (24, -126, float.fromhex("0x1.fffffep+127")),
    "f16": (11, -14, 65504.0),
    "bf16": (8, -126, float.fromhex("0x1.fep+127")),
}


def values(strings):
    """Hex-float strings ("0x1.8p-1", "-0x0p+0", "nan", "inf", "-inf") to a float64 array."""
    return np.array([float.fromhex(s) if s.startswith(("0x", "-0x")) else float(s) for s in strings])


def half_ulp(value, dtype):
    precision, emin, _ = FORMATS[dtype]
    exponent = emin if value == 0 else max(math.frexp(abs(value))[1] - 1, emin)
    return math.ldexp(1.0, exponent - precision + 1) / 2


def rope(spec, positions, data):
    """Our own float64 RoPE of data [tokens, heads, head_dim]; returns the output and the angles."""
    rotary = spec["rotary_dim"]
    pairs = np.arange(rotary // 2)
    theta = float(spec["base"]) ** (-2.0 * pairs / rotary)
    angle = np.asarray(positions, dtype=np.float64)[:, None] * theta[None, :]  # [tokens, pairs]
    if spec["direction"] == "inverse":
        angle = -angle
    if spec["layout"] == "interleaved":  # pair j = dims (2j, 2j + 1)
        first, second = 2 * pairs, 2 * pairs + 1
    else:  # half: pair j = dims (j, j + rotary_dim / 2)
        first, second = pairs, pairs + rotary // 2
    cos, sin = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]
    x, y = data[:, :, first], data[:, :, second]
    out = data.copy()  # pass-through dims [rotary_dim, head_dim) stay as they are
    with np.errstate(invalid="ignore", over="ignore"):
        out[:, :, first] = x * cos - y * sin
        out[:, :, second] = x * sin + y * cos
    return out, angle, first, second


def check_test(spec, test):
    """Returns the number of values checked and a list of problems."""
    tokens, heads, head_dim = test["shape"]
    data = values(test["input"]).reshape(tokens, heads, head_dim)
    expected = values(test["expected"]).reshape(tokens, heads, head_dim)
    ours, angle, first, second = rope(spec, test["positions"], data)
    dtype = spec["dtype"]
    largest = FORMATS[dtype][2]
    log_base = math.log(float(spec["base"]))
    problems = []
    with np.errstate(invalid="ignore", over="ignore"):
        # rho/16 (exact scaling) so that rho itself cannot overflow near the largest float64
        rho_16 = np.hypot(data[:, :, first] / 16, data[:, :, second] / 16)  # [tokens, heads, pairs]
        slack = rho_16 * (np.abs(angle)[:, None, :] * (log_base + 3) * 2.0**-53 + 2.0**-46) * 16
    bound = np.zeros_like(data)
    bound[:, :, first] = slack
    bound[:, :, second] = slack
    for index in np.ndindex(tokens, heads, head_dim):
        a, e, b = ours[index], expected[index], bound[index]
        if math.isnan(e):
            ok = math.isnan(a)
        elif math.isinf(e):
            ok = a == e or (not math.isnan(a) and math.copysign(1, a) == math.copysign(1, e) and abs(a) >= largest - b)
        elif math.isnan(b) or math.isinf(b):
            ok = False
        else:
            ok = abs(a - e) <= b + 2.0**-1072 + half_ulp(e, dtype)
        if not ok:
            problems.append(f"test {test['id']}: element {index}: ours {a!r}, expected {e!r}, bound {b!r}")
    return tokens * heads * head_dim, problems


def main(paths):
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    failed = False
    for path in paths:
        with open(path, encoding="utf-8") as f:
            suite = json.load(f)
        if suite["schema"] != "ropecheck-golden/1" or suite["kind"] != "rope":
            print(f"{path}: not a RoPE suite of schema ropecheck-golden/1", file=sys.stderr)
            return 2
        checked = skipped = 0
        problems = []
        for group in suite["groups"]:
            spec = group["spec"]
            if spec["scaling"] != "none" or "axes" in spec:
                skipped += len(group["tests"])
                continue
            for test in group["tests"]:
                count, found = check_test(spec, test)
                checked += count
                problems += found
        for problem in problems[:20]:
            print(f"{path}: {problem}")
        print(f"{path}: {checked} values checked, {len(problems)} outside the bound, {skipped} tests skipped")
        failed = failed or bool(problems) or checked == 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
