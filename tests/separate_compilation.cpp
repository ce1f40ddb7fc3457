// The one file of the test binary that compiles the network side's compiled
// part: the binary is built with LLMGATE_SEPARATE_COMPILATION
// (tests/CMakeLists.txt), so that the suites over the HTTP client only
// declare its coroutines.
#include "llmgate/src.hpp"
