// The one file of the test binary that compiles the gateway and its
// built-in backend kinds; the suites see LLMGATE_EXTERN_GATEWAY (set in
// tests/CMakeLists.txt) and only declare them, so that a dozen suites
// that start a gateway do not each compile it again.
#include "llmgate/server/gateway.hpp"

template class llmgate::basic_gateway<>;
template llmgate::backend_registry llmgate::backend_registry::builtin<>();
