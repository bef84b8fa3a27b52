// gate_check_test links gate/: compiled with its include path, this compiles.
#include "gate/report.h"
