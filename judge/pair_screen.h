// The parts of screen_pair (judge/pair_rule.h, its bound and proof) that a caller screening many
// pairs of one norm computes once or inline: the same expressions screen_pair itself uses, so a
// caller's decision and screen_pair's are the same for the same values.
#pragma once

#include "judge/pair_rule.h"

namespace ropecheck::judge {

// screen_pair's e_high from the double difference d = max(|a − A_d|, |b − B_d|) and the double unit
// u·ρ·max(1,|g|): judge_pair's e ≤ (d/unit + 2^-20)·(1 + 2^-30) (judge/pair_rule.h PairScreen).
inline double screen_e_high(double difference, double unit) { return (difference / unit + 0x1p-20) * (1 + 0x1p-30); }

// The double unit u·ρ·max(1,|g|) of a pair of norm ρ when its domain is ordinary for certain (ρ
// 2^-40 inside both boundaries of judge_pair's domains) and the data not f64; 0 otherwise (no pair
// of that norm is then sure).
double sure_ordinary_unit(double rho, const PairScreenRule& screen);

}  // namespace ropecheck::judge
