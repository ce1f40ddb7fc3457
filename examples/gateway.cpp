// gateway: llmgate's OpenAI-compatible caching gateway as a program.
//   gateway --config FILE [--port N] [--check-config]
// Serves until SIGINT or SIGTERM, then drains and saves the caches (when
// the config names a snapshot directory). --check-config only validates
// the file and says what it found. The configuration's form is described
// in include/llmgate/server/config.hpp; examples/gateway.json is one.
//
// Exit status: 0 done; 1 the server failed (or could not start: a backend,
// the router or the embedder of the configuration cannot be made, with the
// field named); 2 the options or the configuration are wrong.
#include <cstdio>     // std::printf, std::fprintf
#include <exception>  // std::exception
#include <string>     // std::string

#include <CLI/CLI.hpp>  // command line (Debian libcli11-dev)

#include <llmgate/server/gateway.hpp>
#include <llmgate/server/large_allocations.hpp>

int main(int argc, char** argv) {
  CLI::App app{"llmgate gateway: an OpenAI-compatible server that answers from its caches when it can"};
  std::string config_path;
  int port = -1;
  bool check_only = false;
  app.add_option("-c,--config", config_path, "the JSON configuration file")->required()->check(CLI::ExistingFile);
  app.add_option("-p,--port", port, "listen on this port instead of the configuration's")->check(CLI::Range(0, 65535));
  app.add_flag("--check-config", check_only, "validate the configuration and exit");
  CLI11_PARSE(app, argc, argv);

  llmgate::gateway_config config;
  try {
    config = llmgate::gateway_config::load(config_path);
  } catch (const llmgate::error& e) {
    std::fprintf(stderr, "gateway: %s\n", e.what());
    return 2;
  }
  if (port >= 0) config.port = static_cast<unsigned short>(port);
  if (check_only) {
    std::printf("%s: valid; %zu models, %zu backends, %s, %zu tenants, listening on %s:%u\n", config_path.c_str(),
                config.models.size(), config.backends.size(), config.router ? "routing \"auto\"" : "no router",
                config.tenants.size(), config.address.c_str(), unsigned{config.port});
    return 0;
  }
  llmgate::map_large_allocations();  // a long-running server: freed caches' memory goes back
  try {
    llmgate::gateway gateway(std::move(config));
    gateway.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gateway: %s\n", e.what());
    return 1;
  }
}
