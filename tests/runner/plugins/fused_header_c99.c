/* include/ropecheck/fused.h compiles as C99 (its promise): a declaration of the entry point through
 * the header's own type, built with -std=c99 -pedantic (tests/runner/CMakeLists.txt). */
#include <ropecheck/fused.h>

ropecheck_fused_v1_fn fused_header_c99_entry(void);
ropecheck_fused_v1_fn fused_header_c99_entry(void) { return 0; }
