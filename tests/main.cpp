// The one entry point of llmgate's test binary; suites live beside it.
#define BOOST_TEST_MODULE llmgate
#include <boost/test/unit_test.hpp>
