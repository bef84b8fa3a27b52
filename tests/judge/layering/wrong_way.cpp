// fuzz/ may not use gate/ (fuzz/README.md "May use:"): compiled with fuzz's include path, this fails.
#include "gate/report.h"
