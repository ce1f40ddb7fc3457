// The gateway's configs for tests: over its offline demo backend, for
// tests of what surrounds the pipeline (sessions, metrics, logs), with no
// upstream to start; and in front of one upstream.
#pragma once

#include <cstdio>  // std::FILE, std::rewind, std::fgetc
#include <string>  // std::string

#include "llmgate/server/gateway_config.hpp"  // gateway_config

namespace llmgate::test {

inline gateway_config demo_config() {
  gateway_config config;
  config.listen.port = 0;
  config.listen.threads = 1;
  config.backends = {{.name = "demo", .kind = "demo"}};
  config.models = {{.name = "test-model", .backends = {"demo"}}};
  config.tenants = {{"acme", "key-acme"}};
  config.admin.api_key = "admin-key";
  config.log.requests = false;
  return config;
}

/// The gateway in front of one OpenAI-compatible upstream at `base_url`
/// (backend "upstream", no retries) serving "test-model", for the tests
/// of the gateway's paths to a model server.
inline gateway_config upstream_config(const std::string& base_url) {
  auto config = demo_config();
  config.backends = {{.name = "upstream", .base_url = base_url, .retries = 0}};
  config.models = {{.name = "test-model", .backends = {"upstream"}}};
  config.limits.request_timeout_ms = 5000;
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
