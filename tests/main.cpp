// The one entry point of llmgate's test binary; suites live beside it.
// main is ours so that a run that skipped a test's real part exits with
// skip_exit_code, which CTest reports as skipped.
#define BOOST_TEST_MODULE llmgate
#define BOOST_TEST_NO_MAIN
#include <boost/test/unit_test.hpp>

#include "skip_test.hpp"  // exit_status

int main(int argc, char* argv[]) {
  return llmgate::test::exit_status(boost::unit_test::unit_test_main(&init_unit_test, argc, argv));
}
