// The GoogleTest matcher `MatchesGolden` is public: include/ropecheck/gtest.h (ropecheck::MatchesGolden,
// over ropecheck::judge_golden_file of include/ropecheck/judge.h, implemented in runner/public_judge.cpp).
// This header only forwards to it, for code that includes the matcher by its former path.
#pragma once

#include <ropecheck/gtest.h>
