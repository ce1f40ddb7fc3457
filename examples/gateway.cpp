// gateway: llmgate's OpenAI-compatible caching gateway as a program.
//   gateway --config FILE [--port N] [--check-config]
// Serves until SIGINT or SIGTERM, then drains and saves the caches (when
// the config names a snapshot directory). --check-config runs the checks
// the gateway runs before it starts (gateway_config::check, the router's
// files and the PML schema files) and says what it found. With a "shared"
// section, the gateway shares its caches with the other gateways on the
// same Redis (llmgate/server/shared/redis_shared_tier.hpp). The configuration's form is
// described in include/llmgate/server/gateway_config.hpp; examples/gateway.json
// is one.
//
// Exit status: 0 the configuration is valid (--check-config) or the
// server stopped when asked; 1 the configuration is invalid, or the
// server could not start or failed (the message names the field); 2 a
// usage error: unknown or malformed options, --config missing or not a
// file.
#include <cstdio>     // std::printf, std::fprintf
#include <exception>  // std::exception
#include <memory>     // std::unique_ptr
#include <string>     // std::string

#include <CLI/CLI.hpp>  // command line (Debian libcli11-dev)

#include <llmgate/server/gateway.hpp>                       // gateway, gateway_config, config_error
#include <llmgate/server/operations/large_allocations.hpp>  // map_large_allocations
#include <llmgate/server/prompt_schemas.hpp>                // load_prompt_schemas (--check-config reads the schema files)
#include <llmgate/server/routing/gateway_router.hpp>        // make_gateway_router (--check-config reads the router's files)
#include <llmgate/server/shared/redis_shared_tier.hpp>      // make_shared_tier: the "shared" section's tier (links hiredis)

namespace {

constexpr int valid = 0, invalid = 1, usage = 2;

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"llmgate gateway: an OpenAI-compatible server that answers from its caches when it can"};
  app.footer("Exit status: 0 valid configuration (--check-config) or a clean stop; 1 invalid configuration,\n"
             "or the server could not start; 2 usage error (unknown options, --config missing or not a file).");
  std::string config_path;
  int port = -1;
  bool check_only = false;
  app.add_option("-c,--config", config_path, "the JSON configuration file")->required()->check(CLI::ExistingFile);
  app.add_option("-p,--port", port, "listen on this port instead of the configuration's")->check(CLI::Range(0, 65535));
  app.add_flag("--check-config", check_only, "validate the configuration and exit (0 valid, 1 invalid)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int printed = app.exit(e);  // --help: the help and 0; a mistake: the message
    return printed == 0 ? valid : usage;
  }

  llmgate::gateway_config config;
  llmgate::schema_registry schemas;
  std::unique_ptr<llmgate::gateway_router> router;
  try {
    config = llmgate::gateway_config::load(config_path);
    if (port >= 0) config.listen.port = static_cast<unsigned short>(port);
    if (check_only) {
      router = llmgate::make_gateway_router(config);
      llmgate::load_prompt_schemas(config.prompts, schemas);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gateway: %s\n", e.what());
    return invalid;
  }
  if (check_only) {
    std::printf("%s: valid; %zu models, %zu backends, %s, %zu tenants, %zu PML schemas, listening on %s:%u\n",
                config_path.c_str(), config.models.size(), config.backends.size(),
                router ? ("routing \"auto\" with a " + router->description()).c_str() : "no router",
                config.tenants.size(), schemas.list().size(), config.listen.address.c_str(), unsigned{config.listen.port});
    return valid;
  }
  llmgate::map_large_allocations();  // a long-running server: freed caches' memory goes back
  try {
    llmgate::gateway gateway(std::move(config), llmgate::gateway_parts{.shared = llmgate::make_shared_tier});
    if (const auto* chosen = gateway.router()) std::fprintf(stderr, "gateway: %s\n", chosen->description().c_str());
    gateway.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gateway: %s\n", e.what());
    return invalid;
  }
  return valid;
}
