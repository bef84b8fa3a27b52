// fuzz/ may use judge/: compiled with fuzz's include path, this compiles.
#include "judge/pair_rule.h"
