// tests/ may not use peers/ (tests/README.md "May use:"), and a test's include path holds the include
// roots of what it links and tests/' own, not the source root: compiled with gate_check_test's include
// path, this fails.
#include "peers/ggml/ggml_api.h"
