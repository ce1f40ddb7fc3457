// basic_gateway: the OpenAI-compatible HTTP server in front of the
// pipeline, for applications that cannot link C++, composed from the
// library's parts:
//
//   http/               the HTTP plumbing: listener (worker threads, accept,
//                       drain), session (one connection: read, write,
//                       keep-alive, deadlines, 413), dispatch ((method, path)
//                       -> handler, with the access each needs), responses
//   handlers/*.hpp      chat, embeddings, models, feedback, admin, metrics, health
//   caches/             the cache tiers, built from the config, loaded and saved
//   routing/            the router of the config's "router" section
//   shared/             the tier replicas share (Redis), when the config has
//                       "shared" and the program gives one (gateway_parts::shared)
//   operations/         metrics, the request log, the dashboard, backend health
//   model_backends.hpp  each model's backends, by kind (backend/backend_registry.hpp)
//   gateway_config.hpp  the config, assembled from each component's section
//
//   POST /v1/chat/completions   the pipeline; stream=true answers as SSE
//   POST /v1/messages           the same pipeline in Anthropic's Messages form
//                               (x-api-key or a Bearer token); shares the caches
//   POST /v1/responses          the same pipeline in OpenAI's Responses form,
//                               stateless (store false); shares the caches
//   POST /v1/embeddings         the semantic cache's embedder (the built-in one, or the
//                               "openai" kind's upstream, through the worker's async
//                               embedder) and the models of mode "embedding"
//   GET  /v1/models             the models of the config
//   POST /v1/feedback           {"id": <response id>, "correct": false}: the
//                               verdict reaches the cache and the router
//   GET  /healthz               liveness: 200, or 503 while draining
//   GET  /readyz                readiness: each backend's state; 503 when a
//                               model has no backend available, or draining
//   GET  /metrics               Prometheus text (admin key or metrics token)
//   GET  /admin/stats           the dashboard's JSON (admin key)
//   GET  /dashboard?key=KEY     the operator's page (admin key)
//   POST /admin/prompt_schemas  registers a PML schema (admin key); GET lists them
//
// PML: the schemas of the config's "prompt_schemas" files (read at start)
// and those posted since are one schema_registry, shared by the workers;
// a chat request's PML prompt is compiled against it before the pipeline
// (handlers/chat.hpp), and the usage of each fresh answer to one goes to
// the gateway's prompt_statistics, shown in /metrics and /admin/stats and
// handed to every backend (backend_setup::prompt_statistics).
//
// The pipeline, per worker:
//   UserStages...   the program's own stages, first, so that they see (and
//                   may change: redact) the request before anything is
//                   cached or sent;
//   router          model "auto" or an alias: the router picks the model.
//                   Before the caches, because a cache scope holds the
//                   model: a routed request shares answers with requests
//                   that name its model, and an answer is never served for
//                   a model that did not make it. The router then runs on
//                   hits as well; it needs no network, and its decision
//                   (x-llmgate-model) stays true of the answer served;
//   exact cache, semantic cache   (each may be switched off in the config);
//                   an exact miss waits for an identical request's call
//                   under way (pipeline/coalesced_calls.hpp) unless the
//                   config's exact_cache.coalesce is false;
//                   with a shared tier, a local exact miss asks it next, and
//                   the tier copies the semantic cache's changes to the
//                   other replicas (server/shared/shared_tier.hpp);
//                   the semantic one of the embedder's kind (semantic_tier.hpp):
//                   with kind "openai" each worker awaits embeddings from
//                   its own async_http_embedder, on its own io thread,
//                   holding nothing meanwhile;
//   model backends  the fallback list of the request's (routed) model.
//
// A program adds stages at compile time and backend kinds at run time:
//
//   llmgate::basic_gateway<redact_emails> gateway(config, stderr, redact_emails{});
//   auto kinds = llmgate::backend_registry::builtin();
//   kinds.add("mykind", make_my_backend);
//   llmgate::gateway plain(config, llmgate::gateway_parts{.backends = kinds});
//
// Each worker's pipeline holds copies of the user's stages (a stage is a
// small view onto what it uses). Every /v1 route needs "Authorization:
// Bearer <tenant key>" (401 otherwise); the tenant is part of every cache
// scope. Limits: bodies over max_body_bytes get 413; beyond
// max_concurrent_requests requests wait in a queue of max_queued_requests,
// beyond which they get 429; a request not answered within
// request_timeout_ms gets 504; a backend failure gets 502 with the
// upstream's own error object.
//
// stop() (and SIGTERM or SIGINT under run()) drains: no new connections,
// requests in flight finish, idle connections close; then the shared tier
// sends what it has queued (for up to two seconds) and the caches are
// saved to the snapshot directory, from which the next start loads them.
#pragma once

#include <chrono>      // std::chrono
#include <csignal>     // SIGINT, SIGTERM
#include <cstdio>      // std::FILE
#include <memory>      // std::unique_ptr, std::shared_ptr
#include <optional>    // std::optional
#include <stop_token>  // std::stop_token
#include <string>      // std::string
#include <thread>      // std::jthread
#include <tuple>       // std::tuple, std::apply
#include <utility>     // std::move
#include <vector>      // std::vector

#include <boost/asio/bind_cancellation_slot.hpp>  // the request timeout's cancellation
#include <boost/asio/co_spawn.hpp>                // boost::asio::co_spawn
#include <boost/asio/detached.hpp>                // boost::asio::detached
#include <boost/asio/io_context.hpp>              // boost::asio::io_context
#include <boost/asio/signal_set.hpp>              // boost::asio::signal_set
#include <boost/beast/core/tcp_stream.hpp>        // boost::beast::tcp_stream

#include "llmgate/pipeline/coalesced_calls.hpp"          // coalesced_calls
#include "llmgate/pipeline/exact_cache_stage.hpp"        // exact_cache_stage
#include "llmgate/pipeline/optional_stage.hpp"           // optional_stage
#include "llmgate/pipeline/pipeline.hpp"                 // pipeline
#include "llmgate/prompt/prompt_statistics.hpp"          // prompt_statistics
#include "llmgate/prompt/schema_registry.hpp"            // schema_registry
#include "llmgate/pipeline/router_stage.hpp"             // router_stage
#include "llmgate/server/http/access.hpp"                // access_keys
#include "llmgate/server/http/admission.hpp"             // admission_gate
#include "llmgate/server/operations/backend_health.hpp"  // backend_health, watched_backend
#include "llmgate/backend/backend_registry.hpp"          // backend_registry
#include "llmgate/server/gateway_config.hpp"             // gateway_config
#include "llmgate/server/http/dispatch.hpp"              // dispatch_table
#include "llmgate/server/feedback_registry.hpp"          // feedback_registry
#include "llmgate/server/handlers/admin.hpp"             // stats_handler, dashboard_handler, prompt_schemas_handler
#include "llmgate/server/handlers/anthropic_messages_dialect.hpp"  // /v1/messages
#include "llmgate/server/handlers/chat.hpp"              // chat_handler
#include "llmgate/server/handlers/embeddings.hpp"        // embeddings_route
#include "llmgate/server/handlers/feedback.hpp"          // feedback_handler
#include "llmgate/server/handlers/health.hpp"            // health_handler
#include "llmgate/server/handlers/metrics.hpp"           // metrics_handler
#include "llmgate/server/handlers/models.hpp"            // models_handler
#include "llmgate/server/handlers/openai_responses_dialect.hpp"  // /v1/responses
#include "llmgate/server/handlers/readiness.hpp"         // readiness_handler
#include "llmgate/server/http/listener.hpp"              // listener
#include "llmgate/server/operations/metrics.hpp"         // gateway_metrics
#include "llmgate/server/model_backends.hpp"             // model_backends, model_backend_stage
#include "llmgate/server/prompt_schemas.hpp"             // load_prompt_schemas
#include "llmgate/server/operations/request_log.hpp"     // request_log
#include "llmgate/server/response_ids.hpp"               // response_ids
#include "llmgate/server/caches/remote_embedder.hpp"     // gateway_remote_embedder, make_remote_embedder
#include "llmgate/server/routing/gateway_router.hpp"     // gateway_router, make_gateway_router
#include "llmgate/server/caches/semantic_tier.hpp"       // gateway_semantic_cache, gateway_semantic_stage
#include "llmgate/server/operations/served_request.hpp"  // served_request
#include "llmgate/server/http/session.hpp"               // session
#include "llmgate/server/shared/shared_tier.hpp"         // shared_tier, shared_exact_level
#include "llmgate/server/spending/spending_ledger.hpp"  // spending_ledger, wall_clock
#include "llmgate/server/caches/gateway_caches.hpp"      // gateway_caches

namespace llmgate::inline v0 {

/// What a program gives a gateway beside its config.
struct gateway_parts {
  backend_registry backends = backend_registry::builtin();  ///< the backend kinds it can make
  std::FILE* log = stderr;                                  ///< request and event lines; nullptr: none
  cache_clock clock = {};  ///< what cache lifetimes (ttl_seconds) are measured by; a test's may be moved
  /// What budget periods and per-minute limits are measured by; a test's may be moved.
  wall_clock spending_clock = {};
  /// Makes the tier of the config's "shared" section (llmgate::make_shared_tier,
  /// llmgate/server/shared/redis_shared_tier.hpp); none: a config with "shared" is refused.
  shared_tier_factory shared = {};
};


template <class... UserStages>
class basic_gateway {
 public:
  using pipeline_type = pipeline<UserStages..., optional_stage<router_stage<gateway_router>>,
                                 optional_stage<exact_cache_stage<gateway_exact_cache, shared_exact_level>>,
                                 optional_stage<gateway_semantic_stage>, model_backend_stage>;

  /// Checks the config (gateway_config::check and the backend kinds),
  /// reads its PML schemas (load_prompt_schemas), builds the router and
  /// each worker's backends, and loads the caches from the snapshot
  /// directory when it holds them (a file that cannot be read is moved
  /// aside, with a log line, and the cache starts empty).
  /// Throws llmgate::error naming the config field when something cannot
  /// be made.
  basic_gateway(gateway_config config, gateway_parts parts, UserStages... stages);

  explicit basic_gateway(gateway_config config, std::FILE* log = stderr, UserStages... stages)
      : basic_gateway(std::move(config), gateway_parts{.log = log}, std::move(stages)...) {}

  basic_gateway(const basic_gateway&) = delete;
  basic_gateway& operator=(const basic_gateway&) = delete;
  ~basic_gateway();

  /// Listens and serves on the config's threads; returns at once.
  /// Throws boost::system::system_error when the address cannot be bound.
  void start();

  /// The port it listens on (the system's pick when the config says 0).
  unsigned short port() const { return listener_.port(); }

  /// Drains and stops: no new connections; requests in flight get up to
  /// `drain` to finish, idle connections are closed; then the caches are
  /// saved (when a snapshot directory is set) and the threads end.
  /// Idempotent; called by the destructor.
  void stop(std::chrono::milliseconds drain = std::chrono::seconds(30));

  /// start(), then serve until SIGINT or SIGTERM, then stop().
  void run();

  const gateway_config& config() const noexcept { return config_; }
  gateway_exact_cache& exact() noexcept { return caches_.exact(); }
  /// The semantic cache, of the embedder's kind (hashing() or remote()).
  gateway_semantic_cache& semantic() noexcept { return caches_.semantic(); }
  gateway_metrics& metrics() noexcept { return metrics_; }
  /// The router; nullptr when the config has no "router".
  gateway_router* router() noexcept { return router_.get(); }
  /// The tier shared with other replicas; nullptr when the config has no "shared".
  shared_tier* shared() noexcept { return shared_.get(); }
  /// The PML schemas requests may import (the config's and those posted).
  schema_registry& prompt_schemas() noexcept { return *schemas_; }
  /// How much of each PML module the model servers reused.
  const prompt_statistics& prompt_stats() const noexcept { return *prompt_stats_; }
  /// What each tenant with spending limits spent.
  spending_ledger& spending() noexcept { return spending_; }

 private:
  // What a worker owns: its models' backends (on its connection pool),
  // the embedder of kind "openai" (on a pool of its own), the pipeline
  // over them and the shared caches, and its dispatch table (whose chat
  // handler runs that pipeline). Built in place: the pipeline and the
  // table point into it.
  struct worker {
    worker(basic_gateway& g, const boost::asio::any_io_executor& executor)
        : backends(g.config_, g.registry_, g.models_, executor),
          embedder(remote_embedder_of(g, executor)),
          answer(std::apply([&](const UserStages&... user) { return make_pipeline(g, backends, embedder, user...); },
                            g.stages_)),
          routes(g.keys_) {
      namespace http = boost::beast::http;
      routes.add(http::verb::get, "/healthz", route_access::open, health_handler{&g.listener_.stopping()})
          .add(http::verb::get, "/readyz", route_access::open,
               readiness_handler{&g.config_, &g.health_, &g.listener_.stopping(), g.shared_.get()})
          .add(http::verb::get, "/metrics", route_access::metrics,
               metrics_handler{&g.metrics_, [&g] { return g.gauges(); }, g.prompt_stats_.get()})
          .add(http::verb::get, "/admin/stats", route_access::admin,
               stats_handler{&g.metrics_, [&g](boost::json::object& stats) { g.add_stats(stats); }})
          .add(http::verb::get, "/admin/prompt_schemas", route_access::admin, prompt_schemas_handler{g.schemas_.get(), g.posted_sources()})
          .add(http::verb::post, "/admin/prompt_schemas", route_access::admin,
               prompt_schemas_handler{g.schemas_.get(), g.posted_sources()})
          .add(http::verb::get, "/dashboard", route_access::admin, dashboard_handler{})
          .add(http::verb::get, "/v1/models", route_access::tenant, models_handler(g.config_))
          .add(http::verb::post, "/v1/chat/completions", route_access::tenant,
               chat_handler<pipeline_type>(g.services_, answer))
          .add(http::verb::post, "/v1/messages", route_access::tenant,
               chat_handler<pipeline_type, anthropic_messages_dialect>(g.services_, answer),
               anthropic_messages_dialect::error)
          .add(http::verb::post, "/v1/responses", route_access::tenant,
               chat_handler<pipeline_type, openai_responses_dialect>(g.services_, answer))
          .add(http::verb::post, "/v1/feedback", route_access::tenant, feedback_handler{&g.feedback_, &g.ids_});
      if (embedder)
        routes.add(http::verb::post, "/v1/embeddings", route_access::tenant,
                   embeddings_route(async_embeddings_handler<gateway_remote_embedder>{
                                        *embedder, g.config_.semantic_cache.embedder.model,
                                        std::chrono::milliseconds(g.config_.limits.request_timeout_ms), &g.log_},
                                    g.config_, backends, g.log_));
      else
        routes.add(http::verb::post, "/v1/embeddings", route_access::tenant,
                   embeddings_route(embeddings_handler<hashing_embedder>{&g.caches_.semantic().hashing()->embedder(),
                                                                         g.config_.semantic_cache.embedder.model},
                                    g.config_, backends, g.log_));
    }

    static std::optional<gateway_remote_embedder> remote_embedder_of(basic_gateway& g,
                                                                     const boost::asio::any_io_executor& executor) {
      if (g.caches_.semantic().learns()) return std::nullopt;
      return make_remote_embedder(g.config_.semantic_cache.embedder, executor);
    }

    model_backends backends;
    std::optional<gateway_remote_embedder> embedder;  // kind "openai" only
    pipeline_type answer;
    dispatch_table routes;
  };

  static pipeline_type make_pipeline(basic_gateway& g, model_backends& backends,
                                     const std::optional<gateway_remote_embedder>& embedder, const UserStages&... user) {
    std::optional<router_stage<gateway_router>> routing;
    if (g.router_) routing.emplace(*g.router_, router_stage_options{.aliases = g.config_.router->aliases});
    return pipeline_type(user..., optional_stage<router_stage<gateway_router>>(std::move(routing)),
                         optional_stage(exact_cache_stage(g.caches_.exact(), g.shared_exact(), g.coalesced()),
                                        g.config_.exact_cache.enabled),
                         optional_stage(g.caches_.semantic().stage(embedder), g.config_.semantic_cache.enabled),
                         model_backend_stage(backends));
  }

  static gateway_config checked(gateway_config config, const backend_registry& registry) {
    config.check(registry.kinds());  // what --check-config runs, with this gateway's kinds
    return config;
  }

  // The tier of the config's "shared" section, made by the program's
  // factory; throws config_error when the program gave none.
  static std::unique_ptr<shared_tier> made_shared_tier(const gateway_config& config, const shared_tier_factory& make,
                                                       gateway_caches& caches, spending_ledger& spending,
                                                       request_log& log) {
    if (!config.shared) return nullptr;
    if (!make)
      throw config_error("config: shared needs a gateway built with a shared tier (gateway_parts::shared, "
                         "e.g. llmgate::make_shared_tier); this program has none");
    return make(shared_tier_context{config, caches, spending, log});
  }

  static std::filesystem::path spending_file(const gateway_config& config) {
    return *config.snapshot.directory / "spending.snapshot";
  }

  // What the tenants with spending limits spent before a restart; before
  // the shared tier starts syncing it.
  void load_spending() {
    if (config_.snapshot.directory && !spending_.empty())
      load_snapshot(spending_file(config_), "spending", log_, [&](const auto& path) {
        spending_.load(path);
        return spending_.tenants();
      });
  }

  // Whether exact misses wait for identical requests' calls.
  bool coalescing() const noexcept { return config_.exact_cache.enabled && config_.exact_cache.coalesce; }
  coalesced_calls* coalesced() noexcept { return coalescing() ? &coalesced_ : nullptr; }

  shared_exact_level shared_exact() noexcept {
    return {shared_ && config_.shared->exact ? shared_.get() : nullptr};
  }

  static std::unique_ptr<schema_registry> loaded_schemas(const gateway_config& config) {
    auto schemas = std::make_unique<schema_registry>();
    load_prompt_schemas(config.prompts, *schemas);
    return schemas;
  }

  // The registry's kinds, each backend made watched by `health` (under its
  // config name), so that /readyz knows what each last did, and given the
  // gateway's PML statistics.
  static backend_registry watched(backend_registry kinds, backend_health& health,
                                  const std::shared_ptr<prompt_statistics>& prompts) {
    auto inner = std::make_shared<const backend_registry>(std::move(kinds));
    backend_registry outer;
    for (const auto kind : inner->kinds())
      outer.add(std::string(kind), [inner, &health, prompts](const backend_config& config, const backend_setup& setup) {
        backend_setup with_statistics = setup;
        with_statistics.prompt_statistics = prompts;
        return any_backend(watched_backend(inner->make(config, with_statistics), health, config.name));
      });
    return outer;
  }

  static std::vector<std::string> backend_names(const gateway_config& config) {
    std::vector<std::string> names;
    for (const auto& backend : config.backends) names.push_back(backend.name);
    return names;
  }

  gateway_metrics::gauges gauges() const {
    gateway_metrics::gauges now{
        {"llmgate_in_flight_requests", "Chat requests being answered.", static_cast<double>(admission_.active())},
        {"llmgate_queued_requests", "Chat requests waiting for a place.", static_cast<double>(admission_.queued())},
        {"llmgate_exact_cache_entries", "Answers in the exact cache.", static_cast<double>(caches_.exact().size())},
        {"llmgate_semantic_cache_entries", "Answers in the semantic cache.",
         static_cast<double>(caches_.semantic().size())}};
    // Each family's lines together: limits, then what they hold, then refusals.
    gateway_metrics::gauges limits, used, refused;
    spending_.each_limit([&](std::string_view tenant, spending_measure limit, double allowed, double holds,
                             std::uint64_t refusals) {
      const std::string labels = "tenant=\"" + gateway_metrics::escape(tenant) + "\",limit=\"" +
                                 std::string(limit_name(limit)) + "\"";
      limits.push_back({"llmgate_tenant_limit",
                        "Tenants' spending limits: US dollars per budget period, requests or tokens per minute.",
                        allowed, "gauge", labels});
      used.push_back({"llmgate_tenant_limit_used",
                      "What each tenant's limit counts now: the budget period's spending, or the last minute's.",
                      holds, "gauge", labels});
      refused.push_back({"llmgate_tenant_limit_refusals_total", "Requests each tenant's limit refused.",
                         static_cast<double>(refusals), "counter", labels});
    });
    for (auto* part : {&limits, &used, &refused}) now.insert(now.end(), part->begin(), part->end());
    if (coalescing()) {
      const auto calls = coalesced_.stats();
      now.insert(now.end(), {{"llmgate_coalesced_calls", "Upstream calls that identical requests wait for.",
                              static_cast<double>(calls.calls)},
                             {"llmgate_coalesced_waiting_requests", "Requests waiting for those calls.",
                              static_cast<double>(calls.waiting)}});
    }
    if (shared_) {
      const auto s = shared_->statistics();
      const auto count = [](std::uint64_t n) { return static_cast<double>(n); };
      now.insert(now.end(),
                 {{"llmgate_shared_available", "1 while the shared tier (Redis) answers, else 0.", s.available ? 1.0 : 0.0},
                  {"llmgate_shared_round_trips_total", "Commands the shared tier's store answered.",
                   count(s.round_trips), "counter"},
                  {"llmgate_shared_errors_total", "Shared tier commands that failed or timed out.", count(s.errors),
                   "counter"},
                  {"llmgate_shared_exact_hits_total", "Local exact misses the shared tier answered.",
                   count(s.exact_hits), "counter"},
                  {"llmgate_shared_exact_misses_total", "Local exact misses the shared tier could not answer.",
                   count(s.exact_misses), "counter"},
                  {"llmgate_shared_queued_writes", "Writes waiting for the shared tier's store.",
                   count(s.queued_writes)},
                  {"llmgate_shared_dropped_writes_total", "Writes dropped because the shared tier's queue was full.",
                   count(s.dropped_writes), "counter"},
                  {"llmgate_shared_applied_changes_total", "Other replicas' semantic cache changes applied here.",
                   count(s.applied_changes), "counter"},
                  {"llmgate_shared_replication_lag_seconds",
                   "Age of the last change from another replica when it was applied.", s.replication_lag_ms / 1000}});
    }
    add_pool_gauges(now);
    return now;
  }

  // Each pooled backend's replicas: up, in flight, requests, failures,
  // prompt and reused tokens, and the time to first token the latency
  // policy goes by; each family's lines together.
  void add_pool_gauges(gateway_metrics::gauges& now) const {
    struct family {
      const char* name;
      const char* help;
      const char* type;
      double (*value)(const replica_report&);
    };
    static constexpr family families[] = {
        {"llmgate_pool_replica_up", "1 while a pool's replica takes requests, 0 while it rests after failures.",
         "gauge", [](const replica_report& r) { return r.up ? 1.0 : 0.0; }},
        {"llmgate_pool_replica_in_flight", "Requests a pool's replica is answering.", "gauge",
         [](const replica_report& r) { return static_cast<double>(r.in_flight); }},
        {"llmgate_pool_replica_requests_total", "Requests placed on a pool's replica.", "counter",
         [](const replica_report& r) { return static_cast<double>(r.requests); }},
        {"llmgate_pool_replica_failures_total", "Calls a pool's replica failed for its availability.", "counter",
         [](const replica_report& r) { return static_cast<double>(r.failures); }},
        {"llmgate_pool_replica_prompt_tokens_total", "Prompt tokens a pool's replica was sent.", "counter",
         [](const replica_report& r) { return static_cast<double>(r.prompt_tokens); }},
        {"llmgate_pool_replica_reused_tokens_total",
         "Prompt tokens a pool's replica reused from its cache instead of computing them.", "counter",
         [](const replica_report& r) { return static_cast<double>(r.reused_tokens); }},
        {"llmgate_pool_replica_first_token_seconds", "A pool's replica's moving average time to first token.", "gauge",
         [](const replica_report& r) { return r.ttft_ewma_ms / 1000; }}};
    std::vector<std::pair<std::string, replica_report>> replicas;
    for (const auto& [pool, state] : registry_.pools())
      for (auto& report : state->reports())
        replicas.emplace_back("pool=\"" + gateway_metrics::escape(pool) + "\",replica=\"" +
                                  gateway_metrics::escape(report.name) + "\"",
                              std::move(report));
    for (const auto& f : families)
      for (const auto& [labels, report] : replicas) now.push_back({f.name, f.help, f.value(report), f.type, labels});
  }

  void add_stats(boost::json::object& stats) const {
    const auto exact = caches_.exact().statistics();
    const auto semantic = caches_.semantic().statistics();
    stats["caches"] = {
        {"exact", {{"enabled", config_.exact_cache.enabled}, {"entries", exact.entries}, {"bytes", exact.bytes},
                   {"hits", exact.hits}, {"misses", exact.misses}, {"evictions", exact.evictions}}},
        {"semantic", {{"enabled", config_.semantic_cache.enabled}, {"entries", caches_.semantic().size()},
                      {"lookups", semantic.lookups}, {"hits", semantic.hits}, {"misses", semantic.misses},
                      {"wrong_reports", semantic.wrong_reports}, {"usd_saved", semantic.usd_saved},
                      {"lookup_p50_us", std::chrono::duration<double, std::micro>(semantic.lookup_p50).count()},
                      {"lookup_p99_us", std::chrono::duration<double, std::micro>(semantic.lookup_p99).count()}}}};
    if (shared_) {
      const auto s = shared_->statistics();
      stats["shared"] = {{"available", s.available}, {"detail", s.detail}, {"round_trips", s.round_trips},
                         {"errors", s.errors}, {"exact_hits", s.exact_hits}, {"exact_misses", s.exact_misses},
                         {"queued_writes", s.queued_writes}, {"dropped_writes", s.dropped_writes},
                         {"applied_changes", s.applied_changes}, {"replication_lag_ms", s.replication_lag_ms}};
    }
    stats["admission"] = {{"active", admission_.active()}, {"queued", admission_.queued()}};
    if (!spending_.empty()) stats["spending"] = spending_.statistics();
    if (coalescing()) {
      const auto calls = coalesced_.stats();
      stats["coalescing"] = {{"calls", calls.calls}, {"waiting", calls.waiting}, {"coalesced", calls.coalesced}};
    }
    if (const auto pools = registry_.pools(); !pools.empty()) {
      boost::json::object by_pool;
      for (const auto& [pool, state] : pools) {
        boost::json::array replicas;
        for (const auto& r : state->reports())
          replicas.push_back({{"name", r.name}, {"weight", r.weight}, {"up", r.up}, {"in_flight", r.in_flight},
                              {"requests", r.requests}, {"failures", r.failures}, {"prompt_tokens", r.prompt_tokens},
                              {"reused_tokens", r.reused_tokens}, {"first_token_ewma_ms", r.ttft_ewma_ms}});
        by_pool[pool] = std::move(replicas);
      }
      stats["pools"] = std::move(by_pool);
    }
    boost::json::object prompts = gateway_metrics::prompt_json(*prompt_stats_);
    prompts["registered"] = prompt_schema_list(*schemas_);
    stats["prompts"] = std::move(prompts);
  }

  // Where POSTed schemas' src= files are read from (none: they may not use src).
  schema_sources posted_sources() const {
    return {.directory = config_.prompts.admin_directory.value_or(std::filesystem::path()),
            .max_bytes = config_.prompts.source_max_bytes};
  }

  boost::json::object too_large() const {
    return openai_error("The request body is larger than " + std::to_string(config_.limits.max_body_bytes) + " bytes.",
                        "invalid_request_error", "request_too_large");
  }

  gateway_config config_;
  std::unique_ptr<schema_registry> schemas_;  // read before anything is built
  backend_health health_;  // before the registry, whose backends tell it their results
  std::shared_ptr<prompt_statistics> prompt_stats_;  // before the registry, whose backends are given it
  backend_registry registry_;
  request_log log_;
  gateway_caches caches_;
  spending_ledger spending_;
  std::unique_ptr<shared_tier> shared_;  // after the caches it observes (and may load) and the spending it syncs
  std::unique_ptr<gateway_router> router_;
  model_index models_;
  access_keys keys_;
  admission_gate admission_;
  feedback_registry feedback_;
  coalesced_calls coalesced_;
  gateway_metrics metrics_;
  response_ids ids_;
  chat_services services_{};
  session_options session_options_;
  std::tuple<UserStages...> stages_;

  listener listener_;                             // its io_contexts outlive what the workers built on them
  std::vector<std::unique_ptr<worker>> workers_;  // after the caches and the router their pipelines use
  std::jthread refresher_;                        // the semantic cache's new weights (gateway_caches::refresh_until)
};

// The members that compose the gateway are defined out of the class, so
// that `extern template` (below) keeps them out of the files that only
// use a gateway.

template <class... UserStages>
basic_gateway<UserStages...>::basic_gateway(gateway_config config, gateway_parts parts, UserStages... stages)
    : config_(checked(std::move(config), parts.backends)),
      schemas_(loaded_schemas(config_)),
      health_(backend_names(config_)),
      prompt_stats_(std::make_shared<prompt_statistics>()),
      registry_(watched(std::move(parts.backends), health_, prompt_stats_)),
      log_(config_.log.requests, parts.log),
      caches_(config_, std::move(parts.clock), log_),
      spending_(config_.tenants, std::move(parts.spending_clock)),
      shared_(made_shared_tier(config_, parts.shared, caches_, spending_, log_)),
      router_(make_gateway_router(config_)),
      models_(config_),
      keys_(config_.tenants, config_.admin),
      admission_(config_.limits.max_concurrent_requests, config_.limits.max_queued_requests),
      stages_(std::move(stages)...),
      listener_(config_.listen.threads, {.max_connections = config_.limits.max_connections,
                                  .max_connections_per_address = config_.limits.max_connections_per_address}) {
  load_spending();
  services_ = {&config_, &models_, &admission_, &feedback_, &metrics_, &log_, &ids_, schemas_.get(), prompt_stats_.get(),
               &spending_};
  session_options_.max_body_bytes = config_.limits.max_body_bytes;
  session_options_.max_header_bytes = static_cast<std::uint32_t>(config_.limits.max_header_bytes);
  session_options_.idle_timeout = std::chrono::milliseconds(config_.limits.idle_timeout_ms);
  session_options_.header_timeout = std::chrono::milliseconds(config_.limits.header_timeout_ms);
  session_options_.body_timeout = std::chrono::milliseconds(config_.limits.body_timeout_ms);
  session_options_.too_large = too_large();
  // The one place every response is observed: the metrics and the log.
  session_options_.on_served = [this](const served_request& served) {
    metrics_.record(served);
    log_.write(served);
  };
  for (std::size_t w = 0; w < listener_.workers(); ++w)
    workers_.push_back(std::make_unique<worker>(*this, listener_.io(w).get_executor()));
}

template <class... UserStages>
basic_gateway<UserStages...>::~basic_gateway() {
  stop();
}

template <class... UserStages>
void basic_gateway<UserStages...>::start() {
  listener_.start(config_.listen.address, config_.listen.port, [this](boost::asio::ip::tcp::socket socket, std::size_t w) {
    boost::system::error_code ignored;
    const auto address = socket.remote_endpoint(ignored).address();
    auto s = std::make_shared<session<boost::beast::tcp_stream>>(boost::beast::tcp_stream(std::move(socket)),
                                                                  workers_[w]->routes, session_options_,
                                                                  listener_.stopping());
    listener_.remember(s, address);
    auto served = s->run([this](const std::shared_ptr<session_base>& done) { listener_.forget(done); });
    boost::asio::co_spawn(listener_.io(w), std::move(served),
                          boost::asio::bind_cancellation_slot(s->slot(), boost::asio::detached));
  });
  if (config_.semantic_cache.enabled && caches_.semantic().learns())
    refresher_ = std::jthread([this](std::stop_token stop) { caches_.refresh_until(stop); });
  if (shared_) shared_->start();
  log_.event("listening", {{"address", config_.listen.address}, {"port", port()}, {"threads", config_.listen.threads}});
}

template <class... UserStages>
void basic_gateway<UserStages...>::stop(std::chrono::milliseconds drain) {
  if (!listener_.stop(drain)) return;
  refresher_ = {};  // asks it to stop and joins it: a re-embedding under way finishes first
  if (shared_) shared_->stop(std::chrono::seconds(2));  // this replica's last spending sent first
  caches_.save();
  if (config_.snapshot.directory && !spending_.empty())
    log_snapshot_saved(log_, "spending", spending_.save(spending_file(config_)), spending_.tenants());
  log_.event("stopped");
}

template <class... UserStages>
void basic_gateway<UserStages...>::run() {
  start();
  boost::asio::io_context signals_io;
  boost::asio::signal_set signals(signals_io, SIGINT, SIGTERM);
  signals.async_wait([](const boost::system::error_code&, int) {});
  signals_io.run();
  log_.event("draining");
  stop();
}

/// The gateway with no stages of the program's own.
using gateway = basic_gateway<>;

// A program whose many files use llmgate::gateway can compile it once:
// define LLMGATE_EXTERN_GATEWAY in every file, and in one of them
// instantiate the gateway and its built-in backend kinds:
//
//   template class llmgate::basic_gateway<>;
//   template llmgate::backend_registry llmgate::backend_registry::builtin<>();
//
// (llmgate's own tests do, in tests/server/gateway_instance.cpp.)
#ifdef LLMGATE_EXTERN_GATEWAY
extern template class basic_gateway<>;
#endif

}  // namespace llmgate::inline v0
