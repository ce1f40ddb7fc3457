// The gateway over its offline demo backend, for tests of what surrounds
// the pipeline (sessions, metrics, logs): no upstream to start.
#pragma once

#include <cstdio>  // std::FILE, std::rewind, std::fgetc
#include <string>  // std::string

#include "llmgate/server/config.hpp"  // gateway_config

namespace llmgate::test {

inline gateway_config demo_config() {
  gateway_config config;
  config.port = 0;
  config.threads = 1;
  config.backends = {{.name = "demo", .kind = "demo"}};
  config.models = {{.name = "test-model", .backends = {"demo"}}};
  config.tenants = {{"acme", "key-acme"}};
  config.admin_key = "admin-key";
  config.log_requests = false;
  return config;
}

/// Everything written to `file` so far.
inline std::string contents(std::FILE* file) {
  std::rewind(file);
  std::string text;
  for (int c; (c = std::fgetc(file)) != EOF;) text += static_cast<char>(c);
  return text;
}

}  // namespace llmgate::test
