// Skipping a test whose real part cannot run here (no Node, no npm
// packages, no model file), so that CTest reports it as skipped, never as
// passed:
//
//   if (!fs::exists(model)) return llmgate::test::skip_test("no model at " + model.string());
//
// prints "llmgate-skip: <reason>" and makes the test binary exit with
// skip_exit_code (CTest's SKIP_RETURN_CODE, set on every test in
// tests/CMakeLists.txt) when nothing failed; a failure elsewhere in the
// same run still exits as a failure. With LLMGATE_REQUIRE_REAL_PARTS=1 in
// the environment (.ci/run sets it) a skip is a failure instead, so CI
// never passes without the real parts.
#pragma once

#include <cstdlib>      // std::getenv
#include <iostream>     // std::cout
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <boost/test/unit_test.hpp>  // BOOST_ERROR

namespace llmgate::test {

/// The exit status of a run that skipped something and failed nothing
/// (automake's convention for a skipped test).
inline constexpr int skip_exit_code = 77;

/// Whether this run skipped a test; read by tests/main.cpp.
inline bool& skipped_some() {
  static bool skipped = false;
  return skipped;
}

/// Whether skips are failures (LLMGATE_REQUIRE_REAL_PARTS=1).
inline bool real_parts_required() {
  const char* value = std::getenv("LLMGATE_REQUIRE_REAL_PARTS");
  return value && std::string_view(value) == "1";
}

/// Whether a skip is a failure under LLMGATE_REQUIRE_REAL_PARTS=1
/// (`required`), or stays a skip there (`optional`: a part the issue lets
/// CI go without, such as a llama-server binary only benchmarks build).
enum class real_part { required, optional };

/// Ends nothing by itself: the caller returns right after.
inline void skip_test(const std::string& reason, real_part part = real_part::required) {
  if (part == real_part::required && real_parts_required()) {
    BOOST_ERROR("LLMGATE_REQUIRE_REAL_PARTS=1, but the real part cannot run: " << reason);
    return;
  }
  std::cout << "llmgate-skip: " << reason << std::endl;
  skipped_some() = true;
}

/// The status the test binary exits with, from Boost.Test's.
inline int exit_status(int boost_status) {
  return boost_status == 0 && skipped_some() ? skip_exit_code : boost_status;
}

}  // namespace llmgate::test
