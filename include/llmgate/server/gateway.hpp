// gateway: the OpenAI-compatible HTTP server in front of the pipeline, for
// applications that cannot link C++. Boost.Beast on Asio coroutines, one
// coroutine per connection, on as many threads as the config says. Each
// thread has an io_context of its own and its own backends (so its own
// pool of upstream connections): a connection is served on the thread that
// accepted it from start to end, and a relayed request never changes
// threads. Only the caches, the metrics, the admission gate and the
// feedback registry are shared.
//
//   POST /v1/chat/completions   the pipeline: exact cache, semantic cache, backends
//                               in fallback order; stream=true answers as SSE
//   POST /v1/embeddings         the built-in embedder (the one the semantic cache uses)
//   GET  /v1/models             the models of the config
//   POST /v1/feedback           {"id": <response id>, "correct": false}: a wrong
//                               cached answer stops serving
//   GET  /healthz               200, or 503 while draining
//   GET  /metrics               Prometheus text
//   GET  /admin/stats           the dashboard's JSON (admin key)
//   GET  /dashboard?key=KEY     the operator's page (admin key)
//
// Every /v1 route needs "Authorization: Bearer <tenant key>" (401
// otherwise); the tenant is part of every cache scope. Chat responses say
// what happened in x-llmgate-cache (exact | semantic | miss),
// x-llmgate-similarity and x-llmgate-backend, and their usage carries
// cost_usd (and saved_usd for cached answers).
//
// Limits: bodies over max_body_bytes get 413; beyond max_concurrent_requests
// requests wait in a queue of max_queued_requests, beyond which they get
// 429 with Retry-After; a request not answered within request_timeout_ms
// gets 504; a backend failure gets 502 with the upstream's own error object.
//
// stop() (and SIGTERM or SIGINT under run()) drains: no new connections,
// requests in flight finish, idle connections close; then the caches are
// saved to the snapshot directory, from which the next start loads them.
#pragma once

#include <algorithm>     // std::find, std::count
#include <atomic>        // std::atomic
#include <charconv>      // std::from_chars, std::to_chars
#include <chrono>        // std::chrono
#include <condition_variable>  // std::condition_variable_any (the refresher's pause)
#include <csignal>       // SIGINT, SIGTERM
#include <cstdint>       // std::uint64_t
#include <cstdio>        // std::snprintf
#include <exception>     // std::exception, std::exception_ptr
#include <filesystem>    // std::filesystem
#include <memory>        // std::shared_ptr, std::unique_ptr
#include <mutex>         // std::mutex, std::lock_guard
#include <optional>      // std::optional
#include <random>        // std::random_device
#include <set>           // std::set
#include <stop_token>    // std::stop_token
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <thread>        // std::thread, std::jthread, std::this_thread::sleep_for
#include <unordered_map> // key -> tenant
#include <utility>       // std::pair, std::exchange
#include <vector>        // std::vector

#include <boost/asio/as_tuple.hpp>                          // boost::asio::as_tuple
#include <boost/asio/bind_cancellation_slot.hpp>            // the request timeout's cancellation
#include <boost/asio/cancellation_signal.hpp>               // boost::asio::cancellation_signal
#include <boost/asio/co_spawn.hpp>                          // boost::asio::co_spawn
#include <boost/asio/detached.hpp>                          // boost::asio::detached
#include <boost/asio/executor_work_guard.hpp>               // boost::asio::executor_work_guard
#include <boost/asio/io_context.hpp>                        // boost::asio::io_context
#include <boost/asio/ip/tcp.hpp>                            // boost::asio::ip::tcp
#include <boost/asio/signal_set.hpp>                        // boost::asio::signal_set
#include <boost/asio/steady_timer.hpp>                      // boost::asio::steady_timer
#include <boost/asio/write.hpp>                             // boost::asio::async_write
#include <boost/beast/core.hpp>                             // tcp_stream, flat_buffer
#include <boost/beast/http.hpp>                             // requests, responses, parser
#include <boost/json/monotonic_resource.hpp>                // arenas for a request's JSON
#include <boost/json/parse.hpp>                             // boost::json::parse
#include <boost/json/serialize.hpp>                         // boost::json::serialize

#include "llmgate/backend/any_backend.hpp"
#include "llmgate/backend/backend_error.hpp"
#include "llmgate/backend/embedding.hpp"
#include "llmgate/backend/fallback.hpp"
#include "llmgate/backend/openai_backend.hpp"
#include "llmgate/backend/retry.hpp"
#include "llmgate/cache/exact_cache.hpp"
#include "llmgate/cache/semantic_cache.hpp"
#include "llmgate/pipeline.hpp"
#include "llmgate/server/admission.hpp"
#include "llmgate/server/config.hpp"
#include "llmgate/server/dashboard.hpp"
#include "llmgate/server/demo_backend.hpp"
#include "llmgate/server/feedback_registry.hpp"
#include "llmgate/server/metrics.hpp"
#include "llmgate/server/openai_errors.hpp"
#include "llmgate/server/request_log.hpp"
#include "llmgate/server/response_bytes.hpp"
#include "llmgate/server/sse_stream.hpp"

namespace llmgate::inline v0 {

/// The gateway's pipeline: both cache tiers (each may be switched off in the
/// config), then the backends in fallback order.
using gateway_exact_cache = exact_cache<cached_answer>;
using gateway_semantic_cache = basic_semantic_cache<cached_answer>;
using gateway_backends = fallback_backend<any_backend>;
using gateway_pipeline = pipeline<optional_stage<exact_cache_stage<gateway_exact_cache>>,
                                  optional_stage<semantic_cache_stage<gateway_semantic_cache>>,
                                  backend_stage<gateway_backends>>;

class gateway {
  using tcp = boost::asio::ip::tcp;
  using request_type = boost::beast::http::request<boost::beast::http::string_body>;
  using response_type = boost::beast::http::response<boost::beast::http::string_body>;

 public:
  /// Loads the caches from the snapshot directory when it holds them (a
  /// file that cannot be read is moved aside, with a log line, and the
  /// cache starts empty). Throws llmgate::error when a backend cannot be
  /// made.
  explicit gateway(gateway_config config, std::FILE* log = stderr)
      : config_(std::move(config)),
        log_(config_.log_requests, log),
        exact_(load_exact_cache()),
        semantic_(load_semantic_cache()),
        admission_(config_.max_concurrent_requests, config_.max_queued_requests) {
    for (unsigned i = 0; i < config_.threads; ++i) workers_.push_back(std::make_unique<worker>(*this));
    acceptor_.emplace(workers_.front()->io);
    for (const auto& tenant : config_.tenants) tenant_of_key_[tenant.api_key] = tenant.name;
    std::random_device entropy;
    id_start_ = "chatcmpl-llmgate-" + hex(static_cast<std::uint64_t>(entropy()) << 32 | entropy()) + "-";
  }

  gateway(const gateway&) = delete;
  gateway& operator=(const gateway&) = delete;
  ~gateway() { stop(); }

  /// Listens and serves on the config's threads; returns at once.
  /// Throws boost::system::system_error when the address cannot be bound.
  void start() {
    const tcp::endpoint endpoint(boost::asio::ip::make_address(config_.address), config_.port);
    acceptor_->open(endpoint.protocol());
    acceptor_->set_option(tcp::acceptor::reuse_address(true));
    acceptor_->bind(endpoint);
    acceptor_->listen();
    boost::asio::co_spawn(acceptor_->get_executor(), accept_connections(), boost::asio::detached);
    for (auto& w : workers_) w->thread = std::thread([&io = w->io] { io.run(); });
    if (config_.semantic_cache) refresher_ = std::jthread([this](std::stop_token stop) { refresh_weights(stop); });
    log_.event("listening", {{"address", config_.address}, {"port", port()}, {"threads", config_.threads}});
  }

  /// The port it listens on (the system's pick when the config says 0).
  unsigned short port() const { return acceptor_->local_endpoint().port(); }

  /// Drains and stops: no new connections; requests in flight get up to
  /// `drain` to finish, idle connections are closed; then the caches are
  /// saved (when a snapshot directory is set) and the threads end.
  /// Idempotent; called by the destructor.
  void stop(std::chrono::milliseconds drain = std::chrono::seconds(30)) {
    if (!workers_.front()->thread.joinable() || stopping_.exchange(true)) return;
    boost::asio::post(acceptor_->get_executor(), [this] { acceptor_->close(); });
    close_connections(/*busy_too=*/false);
    const auto deadline = std::chrono::steady_clock::now() + drain;
    while (open_connections() > 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    close_connections(/*busy_too=*/true);
    while (open_connections() > 0 && std::chrono::steady_clock::now() < deadline + std::chrono::seconds(1))
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    for (auto& w : workers_) w->io.stop();
    for (auto& w : workers_) w->thread.join();
    refresher_ = {};  // asks it to stop and joins it: a re-embedding under way finishes first
    save_snapshots();
    log_.event("stopped");
  }

  /// start(), then serve until SIGINT or SIGTERM, then stop().
  void run() {
    start();
    boost::asio::io_context signals_io;
    boost::asio::signal_set signals(signals_io, SIGINT, SIGTERM);
    signals.async_wait([](const boost::system::error_code&, int) {});
    signals_io.run();
    log_.event("draining");
    stop();
  }

  gateway_exact_cache& exact() noexcept { return *exact_; }
  gateway_semantic_cache& semantic() noexcept { return *semantic_; }
  gateway_metrics& metrics() noexcept { return metrics_; }

 private:
  // A thread, its io_context, and what requests served there use that is
  // not shared: the backends (with their connection pool) and the pipeline
  // over them. The io_context is run by this thread alone.
  struct worker {
    explicit worker(gateway& owner)
        : backends(owner.make_backends(io.get_executor())),
          answer(optional_stage(exact_cache_stage(*owner.exact_), owner.config_.exact_cache),
                 optional_stage(semantic_cache_stage(*owner.semantic_), owner.config_.semantic_cache),
                 backend_stage(backends)) {}
    boost::asio::io_context io{1};
    // Keeps run() going while the worker has no connection yet; stop() ends it.
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> running{io.get_executor()};
    gateway_backends backends;
    gateway_pipeline answer;
    std::thread thread;
  };

  // One client connection, served on its worker's thread only.
  struct connection : std::enable_shared_from_this<connection> {
    connection(tcp::socket socket, worker& owner)
        : stream(std::move(socket)), owner(owner), deadline(stream.get_executor()) {}
    boost::beast::tcp_stream stream;
    worker& owner;
    bool busy = false;  // while a request is being answered
    // The request timeout: when `deadline` expires while the pipeline
    // answers a request, `cancel` cancels what it waits for.
    boost::asio::steady_timer deadline;
    boost::asio::cancellation_signal cancel;
    std::uint64_t requests = 0;
    std::uint64_t answering = 0;  // the number of the request in the pipeline; 0: none
    bool timed_out = false;
    std::string wire;  // the bytes of the response being written; its capacity is kept for the next
  };
  static constexpr std::size_t max_kept_wire_bytes = 64 * 1024;

  // ---- start-up -----------------------------------------------------------

  std::filesystem::path snapshot_path(std::string_view cache) const {
    return *config_.snapshot_directory / (std::string(cache) + ".snapshot");
  }

  // Loads a snapshot with `load`, or makes an empty cache with `make`; a
  // file that cannot be read is kept beside, renamed, for inspection.
  template <class Cache, class Load, class Make>
  std::unique_ptr<Cache> load_or_make(std::string_view cache, Load load, Make make) {
    if (config_.snapshot_directory && std::filesystem::exists(snapshot_path(cache))) {
      const auto path = snapshot_path(cache);
      try {
        std::unique_ptr<Cache> loaded(new Cache(load(path)));
        log_.event("snapshot_loaded", {{"cache", cache}, {"entries", loaded->size()}});
        return loaded;
      } catch (const std::exception& e) {
        auto aside = path;
        aside += ".unreadable";
        std::error_code ignored;
        std::filesystem::rename(path, aside, ignored);
        log_.event("snapshot_unreadable", {{"cache", cache}, {"error", e.what()}, {"moved_to", aside.string()}});
      }
    }
    return std::unique_ptr<Cache>(new Cache(make()));
  }

  exact_cache_options exact_options() const {
    return {.max_entries = config_.exact_max_entries, .max_bytes = config_.exact_max_bytes};
  }
  // The refresher thread, not a request, re-embeds the stored requests
  // when the embedder's weights are due (refresh_weights).
  semantic_cache_options semantic_options() const {
    return {.max_entries = config_.semantic_max_entries, .hnsw = config_.semantic_hnsw, .refresh_in_insert = false};
  }
  hashing_embedder embedder() const { return hashing_embedder({.dimension = config_.embedding_dimension}); }
  static_threshold threshold() const { return {static_cast<float>(config_.semantic_threshold)}; }

  std::unique_ptr<gateway_exact_cache> load_exact_cache() {
    return load_or_make<gateway_exact_cache>(
        "exact", [&](const auto& path) { return gateway_exact_cache::load(path, exact_options()); },
        [&] { return gateway_exact_cache(exact_options()); });
  }

  std::unique_ptr<gateway_semantic_cache> load_semantic_cache() {
    if constexpr (requires(const std::filesystem::path& path) { gateway_semantic_cache::load(path); }) {
      return load_or_make<gateway_semantic_cache>(
          "semantic",
          [&](const auto& path) {
            return gateway_semantic_cache::load(path, semantic_options(), embedder(), threshold());
          },
          [&] { return gateway_semantic_cache(semantic_options(), embedder(), threshold()); });
    } else {
      return std::make_unique<gateway_semantic_cache>(semantic_options(), embedder(), threshold());
    }
  }

  // Re-embeds the semantic cache under new weights whenever they are due,
  // checking a few times a second: on this thread, the second or so it
  // takes at 100,000 entries keeps no request waiting.
  void refresh_weights(std::stop_token stop) {
    std::mutex mutex;
    std::condition_variable_any pause;
    std::unique_lock lock(mutex);
    while (!stop.stop_requested()) {
      try {
        semantic_->refresh();
      } catch (const std::exception& e) {  // out of memory, say: the cache keeps its weights and tries again
        log_.event("refresh_failed", {{"error", e.what()}});
      }
      pause.wait_for(lock, stop, std::chrono::milliseconds(100), [] { return false; });
    }
  }

  void save_snapshots() {
    if (!config_.snapshot_directory) return;
    std::error_code ec;
    std::filesystem::create_directories(*config_.snapshot_directory, ec);
    const auto saved = [&](std::string_view cache, std::error_code problem, std::size_t entries) {
      if (problem) log_.event("snapshot_failed", {{"cache", cache}, {"error", problem.message()}});
      else log_.event("snapshot_saved", {{"cache", cache}, {"entries", entries}});
    };
    saved("exact", exact_->save(snapshot_path("exact")), exact_->size());
    if constexpr (requires(const std::filesystem::path& path) { semantic_->save(path); })
      saved("semantic", semantic_->save(snapshot_path("semantic")), semantic_->size());
  }

  gateway_backends make_backends(const boost::asio::any_io_executor& executor) {
    auto client = std::make_shared<http_client>(executor);
    std::vector<any_backend> backends;
    for (const auto& b : config_.backends) {
      if (b.kind == "demo") {
        backends.emplace_back(make_demo_backend(b.name));
        continue;
      }
      openai_backend model(client, {.name = b.name, .base_url = b.base_url, .api_key = b.api_key,
                                    .model = b.model, .prices = config_.prices});
      backends.emplace_back(retrying_backend(std::move(model), retry_policy{.max_attempts = b.retries + 1}));
    }
    // Named by its members, so that a header naming it before the member
    // that answers is known (a streamed answer's) is still plain.
    std::string name;
    for (const auto& b : config_.backends) name += (name.empty() ? "" : ">") + b.name;
    return gateway_backends(std::move(backends), name);
  }

  // ---- connections --------------------------------------------------------

  // Hands the connections to the workers in turn.
  boost::asio::awaitable<void> accept_connections() {
    for (std::size_t next = 0;; ++next) {
      worker& owner = *workers_[next % workers_.size()];
      auto [ec, socket] =
          co_await acceptor_->async_accept(owner.io, boost::asio::as_tuple(boost::asio::use_awaitable));
      if (ec) {
        if (!acceptor_->is_open()) co_return;
        continue;  // e.g. too many open files: the next accept may work
      }
      // Answers go out at once, not held back to coalesce with bytes that never come.
      socket.set_option(tcp::no_delay(true), ec);
      auto c = std::make_shared<connection>(std::move(socket), owner);
      {
        std::lock_guard lock(connections_mutex_);
        connections_.insert(c);
      }
      boost::asio::co_spawn(owner.io, serve(c),
                            boost::asio::bind_cancellation_slot(c->cancel.slot(), boost::asio::detached));
    }
  }

  std::size_t open_connections() {
    std::lock_guard lock(connections_mutex_);
    return connections_.size();
  }

  // Closes idle connections (all of them with busy_too), each on its own thread.
  void close_connections(bool busy_too) {
    std::lock_guard lock(connections_mutex_);
    for (const auto& c : connections_)
      boost::asio::post(c->stream.get_executor(), [c, busy_too] {
        if (busy_too || !c->busy) c->stream.socket().close();
      });
  }

  // Reads requests and answers them, in order, until the client or a
  // drain closes the connection.
  boost::asio::awaitable<void> serve(std::shared_ptr<connection> c) {
    namespace http = boost::beast::http;
    boost::beast::flat_buffer buffer;
    try {
      while (!stopping_) {
        http::request_parser<http::string_body> parser;
        parser.body_limit(config_.max_body_bytes);
        c->stream.expires_after(std::chrono::seconds(60));  // an idle keep-alive connection
        auto [ec, bytes] = co_await http::async_read(c->stream, buffer, parser,
                                                     boost::asio::as_tuple(boost::asio::use_awaitable));
        if (ec == http::error::body_limit) {
          auto response = too_large();
          co_await http::async_write(c->stream, response, boost::asio::use_awaitable);
          break;
        }
        if (ec) break;
        c->stream.expires_never();  // the request timeout applies instead
        c->busy = true;
        const request_type& request = parser.get();
        auto response = co_await route(*c, request);
        if (response) {
          response->keep_alive(request.keep_alive() && !stopping_);
          response->prepare_payload();
          c->wire.clear();
          append_response_bytes(*response, c->wire);
          co_await boost::asio::async_write(c->stream, boost::asio::buffer(c->wire), boost::asio::use_awaitable);
          if (c->wire.capacity() > max_kept_wire_bytes) std::string().swap(c->wire);  // a dashboard page, say
          if (!response->keep_alive()) break;
        } else if (!request.keep_alive()) {
          break;
        }
        c->busy = false;
      }
    } catch (const std::exception&) {
      // The client went away mid-answer: nothing left to tell it.
    }
    boost::system::error_code ignored;
    c->stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    std::lock_guard lock(connections_mutex_);
    connections_.erase(c);
  }

  // ---- routes -------------------------------------------------------------

  // A whole response to write, or nothing when the route streamed its own.
  boost::asio::awaitable<std::optional<response_type>> route(connection& c, const request_type& request) {
    namespace http = boost::beast::http;
    const std::string_view target = request.target();
    const std::string_view path = target.substr(0, target.find('?'));
    const bool get = request.method() == http::verb::get;
    const bool post = request.method() == http::verb::post;

    if (path == "/healthz" && get)
      co_return stopping_ ? json_response(http::status::service_unavailable, {{"status", "draining"}})
                          : json_response(http::status::ok, {{"status", "ok"}});
    if (path == "/metrics" && get) co_return text_response("text/plain; version=0.0.4", metrics_.prometheus(gauges()));
    if (path == "/admin/stats" && get)
      co_return admin(request) ? json_response(http::status::ok, stats()) : forbidden();
    if (path == "/dashboard" && get)
      co_return admin(request) ? text_response("text/html; charset=utf-8", std::string(dashboard_html)) : forbidden();

    const bool known = path == "/v1/chat/completions" || path == "/v1/embeddings" || path == "/v1/models" ||
                       path == "/v1/feedback";
    if (!known) co_return error_response(http::status::not_found, "Unknown request URL: " + std::string(path),
                                         "invalid_request_error", "unknown_url");
    const auto tenant = tenant_of(request);
    if (!tenant)
      co_return error_response(http::status::unauthorized,
                               "Incorrect API key provided. Send \"Authorization: Bearer <your key>\".",
                               "invalid_request_error", "invalid_api_key");
    if (path == "/v1/models" && get) co_return models();
    if (path == "/v1/chat/completions" && post) co_return co_await chat(c, request, *tenant);
    if (path == "/v1/embeddings" && post) co_return embeddings(request);
    if (path == "/v1/feedback" && post) co_return feedback(request, *tenant);
    co_return error_response(http::status::method_not_allowed,
                             "Method " + std::string(request.method_string()) + " is not allowed on " +
                                 std::string(path),
                             "invalid_request_error", "method_not_allowed");
  }

  boost::asio::awaitable<std::optional<response_type>> chat(connection& c, const request_type& http_request,
                                                            const std::string& tenant) {
    namespace http = boost::beast::http;
    const auto started = std::chrono::steady_clock::now();
    request_outcome outcome{.tenant = tenant};
    const auto finish = [&](response_type response, bool streamed = false) {
      outcome.status = response.result_int();
      outcome.latency = std::chrono::steady_clock::now() - started;
      metrics_.record(outcome);
      log_.write("POST", "/v1/chat/completions", outcome, streamed);
      return std::optional<response_type>(std::move(response));
    };

    chat_request request;
    if (auto problem = parse_chat(http_request.body(), request)) co_return finish(std::move(*problem));
    if (std::find(config_.models.begin(), config_.models.end(), request.model) == config_.models.end())
      co_return finish(error_response(http::status::not_found,
                                      "The model `" + request.model +
                                          "` does not exist or you do not have access to it.",
                                      "invalid_request_error", "model_not_found", "model"));

    const std::chrono::milliseconds timeout(config_.request_timeout_ms);
    const auto ticket = co_await admission_.enter(timeout);
    if (!ticket) {
      auto response = error_response(http::status::too_many_requests,
                                     "The gateway is at its limit of concurrent requests; retry shortly.",
                                     "rate_limit_error", "rate_limit_exceeded");
      response.set(http::field::retry_after, "1");
      co_return finish(std::move(response));
    }

    const std::int64_t created = unix_now();
    const std::uint64_t answer_number = ++answers_;
    sse_stream sse(c.stream, response_id(answer_number), request.model, created,
                   http_request.keep_alive() && !stopping_);
    request_context context{.tenant = tenant};
    if (request.stream) {
      context.on_chunk = [&](const chat_chunk& chunk) -> boost::asio::awaitable<void> {
        if (!sse.started()) {
          outcome_headers(context, [&](auto name, auto value) { sse.header(name, value); });
          co_await sse.start();
        }
        if (chunk.content_delta.empty() && !chunk.finish_reason && chunk.tool_call_deltas_json.empty())
          co_return;  // usage: sent once at the end, with its cost
        co_await sse.send(chunk);
      };
    }

    // The pipeline runs in this coroutine; past the deadline, what it waits
    // for is cancelled (through the slot serve() was spawned with) and it
    // ends by throwing. Cheaper than a second coroutine racing a timer.
    const std::uint64_t number = ++c.requests;
    c.answering = number;
    c.deadline.expires_after(timeout);
    c.deadline.async_wait([c = c.shared_from_this(), number](const boost::system::error_code& ec) {
      if (ec || c->answering != number) return;  // answered in time, or a late expiry
      c->timed_out = true;
      c->cancel.emit(boost::asio::cancellation_type::terminal);
    });
    chat_response response;
    std::exception_ptr failure;
    try {
      response = co_await c.owner.answer(request, context);
    } catch (...) {
      failure = std::current_exception();
    }
    c.answering = 0;
    c.deadline.cancel();
    const bool timed_out = std::exchange(c.timed_out, false);
    if (timed_out) co_await boost::asio::this_coro::reset_cancellation_state();  // to answer the 504
    outcome.cache = context.cache;
    outcome.backend = context.backend;

    if (failure || timed_out) {
      auto [status, body] = !timed_out ? error_of(failure, outcome)
                                    : std::pair(http::status::gateway_timeout,
                                                openai_error("The model did not answer within " +
                                                                 std::to_string(timeout.count()) + " ms.",
                                                             "timeout_error", "timeout"));
      if (!sse.started()) {
        auto response = json_response(status, body);
        if (!outcome.backend.empty()) response.set("x-llmgate-backend", outcome.backend);
        co_return finish(std::move(response));
      }
      co_await sse.fail(body);  // the client sees the error and the end of the stream, no [DONE]
      finish(response_type(status, 11), true);
      co_return std::nullopt;
    }

    outcome.prompt_tokens = response.usage.prompt_tokens;
    outcome.completion_tokens = response.usage.completion_tokens;
    outcome.cost_usd = response.cost_usd;
    outcome.saved_usd = context.saved_usd;
    if (context.feedback) feedback_.remember(answer_number, tenant, std::move(context.feedback));
    if (request.stream) {
      if (!sse.started()) {  // an answer with nothing to stream
        outcome_headers(context, [&](auto name, auto value) { sse.header(name, value); });
        co_await sse.start();
      }
      const auto saved = context.cache != cache_outcome::miss ? std::optional(context.saved_usd) : std::nullopt;
      co_await sse.send_usage(response.usage, response.cost_usd, saved);
      co_await sse.finish();
      finish(response_type(http::status::ok, 11), true);
      co_return std::nullopt;
    }
    auto reply = text_response("application/json", completion_body(response, context, sse.id(), created));
    outcome_headers(context, [&](auto name, auto value) { reply.set(name, value); });
    co_return finish(std::move(reply));
  }

  // The chat.completion body of an answer, under the gateway's id and time,
  // with the same usage object as the stream's last chunk.
  static std::string completion_body(const chat_response& response, const request_context& context,
                                     const std::string& id, std::int64_t created) {
    std::string body;
    body.reserve(384 + response.content.size() + response.model.size());
    append_completion_body(body, response, id, created,
                           context.cache != cache_outcome::miss ? std::optional(context.saved_usd) : std::nullopt);
    return body;
  }

  // The status and error object a failed pipeline answers with: 502 and
  // the upstream's own error object for a backend failure, 500 otherwise.
  static std::pair<boost::beast::http::status, boost::json::object> error_of(std::exception_ptr failure,
                                                                             request_outcome& outcome) {
    namespace http = boost::beast::http;
    try {
      std::rethrow_exception(failure);
    } catch (const backend_error& e) {
      outcome.backend = e.backend();
      return {http::status::bad_gateway, boost::json::object{{"error", e.error_object()}}};
    } catch (const std::exception& e) {
      return {http::status::internal_server_error,
              openai_error(std::string("The gateway failed: ") + e.what(), "server_error", "internal_error")};
    }
  }

  // Fills `request` from a chat body, or returns the 400 to answer. The
  // parsed JSON lives in an arena on the stack: the request copies what it
  // keeps into storage of its own.
  std::optional<response_type> parse_chat(const std::string& body, chat_request& request) const {
    namespace http = boost::beast::http;
    unsigned char buffer[4096];
    boost::json::monotonic_resource arena(buffer, sizeof buffer);
    boost::system::error_code ec;
    const boost::json::value json = boost::json::parse(body, ec, &arena);
    if (ec)
      return error_response(http::status::bad_request,
                            "We could not parse the JSON body of your request: " + ec.message(),
                            "invalid_request_error", "invalid_json");
    try {
      request = parse_chat_request(json);
    } catch (const error& e) {
      return error_response(http::status::bad_request, e.what(), "invalid_request_error", "invalid_request");
    }
    return std::nullopt;
  }

  response_type embeddings(const request_type& http_request) {
    namespace http = boost::beast::http;
    boost::system::error_code ec;
    const boost::json::value json = boost::json::parse(http_request.body(), ec);
    if (ec)
      return error_response(http::status::bad_request,
                            "We could not parse the JSON body of your request: " + ec.message(),
                            "invalid_request_error", "invalid_json");
    embedding_request request;
    try {
      request = parse_embedding_request(json);
    } catch (const error& e) {
      return error_response(http::status::bad_request, e.what(), "invalid_request_error", "invalid_request");
    }
    if (request.model != config_.embedding_model)
      return error_response(http::status::not_found,
                            "The model `" + request.model + "` does not exist; this gateway embeds with `" +
                                config_.embedding_model + "`.",
                            "invalid_request_error", "model_not_found", "model");
    embedding_response response;
    response.model = request.model;
    const auto& embedder = semantic_->embedder();
    for (const auto& text : request.input) {
      std::vector<float> vector(embedder.dimension());
      (void)embedder.embed(text, vector);  // text the embedder cannot use embeds as zeros
      response.embeddings.push_back(std::move(vector));
      response.usage.prompt_tokens += 1 + std::count(text.begin(), text.end(), ' ');
    }
    return json_response(http::status::ok, to_json(response));
  }

  response_type models() const {
    boost::json::array data;
    for (const auto& model : config_.models)
      data.push_back({{"id", model}, {"object", "model"}, {"created", 0}, {"owned_by", "llmgate"}});
    data.push_back({{"id", config_.embedding_model}, {"object", "model"}, {"created", 0}, {"owned_by", "llmgate"}});
    return json_response(boost::beast::http::status::ok, {{"object", "list"}, {"data", std::move(data)}});
  }

  response_type feedback(const request_type& http_request, const std::string& tenant) {
    namespace http = boost::beast::http;
    boost::system::error_code ec;
    const boost::json::value json = boost::json::parse(http_request.body(), ec);
    const auto* object = json.if_object();
    const auto* id = object ? object->if_contains("id") : nullptr;
    const auto* correct = object ? object->if_contains("correct") : nullptr;
    if (ec || !id || !id->is_string() || !correct || !correct->is_bool())
      return error_response(http::status::bad_request,
                            "Send {\"id\": \"<the response id>\", \"correct\": true or false}.",
                            "invalid_request_error", "invalid_request");
    const std::string_view response_id = id->get_string();
    if (feedback_.judge(answer_number_of(response_id), tenant, correct->get_bool()) ==
        feedback_registry::outcome::unknown_id)
      return error_response(http::status::not_found,
                            "No cached answer with id `" + std::string(response_id) + "` awaits feedback from you.",
                            "invalid_request_error", "unknown_id", "id");
    return json_response(http::status::ok, {{"id", response_id}, {"recorded", true}});
  }

  // ---- what the admin views show ------------------------------------------

  gateway_metrics::gauges gauges() const {
    return {{"llmgate_in_flight_requests", static_cast<double>(admission_.active())},
            {"llmgate_queued_requests", static_cast<double>(admission_.queued())},
            {"llmgate_exact_cache_entries", static_cast<double>(exact_->size())},
            {"llmgate_semantic_cache_entries", static_cast<double>(semantic_->size())}};
  }

  boost::json::object stats() const {
    boost::json::object stats = metrics_.stats();
    const auto exact = exact_->statistics();
    const auto semantic = semantic_->statistics();
    stats["caches"] = {
        {"exact", {{"enabled", config_.exact_cache}, {"entries", exact.entries}, {"bytes", exact.bytes},
                   {"hits", exact.hits}, {"misses", exact.misses}, {"evictions", exact.evictions}}},
        {"semantic", {{"enabled", config_.semantic_cache}, {"entries", semantic_->size()},
                      {"lookups", semantic.lookups}, {"hits", semantic.hits}, {"misses", semantic.misses},
                      {"wrong_reports", semantic.wrong_reports}, {"usd_saved", semantic.usd_saved},
                      {"lookup_p50_us", std::chrono::duration<double, std::micro>(semantic.lookup_p50).count()},
                      {"lookup_p99_us", std::chrono::duration<double, std::micro>(semantic.lookup_p99).count()}}}};
    stats["admission"] = {{"active", admission_.active()}, {"queued", admission_.queued()}};
    return stats;
  }

  // ---- helpers ------------------------------------------------------------

  std::optional<std::string> tenant_of(const request_type& request) const {
    const std::string_view authorization = request[boost::beast::http::field::authorization];
    constexpr std::string_view bearer = "Bearer ";
    if (!authorization.starts_with(bearer)) return std::nullopt;
    const auto found = tenant_of_key_.find(std::string(authorization.substr(bearer.size())));
    if (found == tenant_of_key_.end()) return std::nullopt;
    return found->second;
  }

  // The admin key as a Bearer token, or as ?key= (a browser opening the dashboard).
  bool admin(const request_type& request) const {
    if (config_.admin_key.empty()) return false;
    const std::string_view authorization = request[boost::beast::http::field::authorization];
    if (authorization == "Bearer " + config_.admin_key) return true;
    const std::string_view target = request.target();
    const auto query = target.find('?');
    if (query == std::string_view::npos) return false;
    for (std::string_view rest = target.substr(query + 1); !rest.empty();) {
      const auto end = rest.find('&');
      if (rest.substr(0, end) == "key=" + config_.admin_key) return true;
      if (end == std::string_view::npos) break;
      rest.remove_prefix(end + 1);
    }
    return false;
  }

  // x-llmgate-cache, -similarity and -backend, through `set(name, value)`.
  template <class SetHeader>
  static void outcome_headers(const request_context& context, SetHeader set) {
    char similarity[32];
    const auto end = std::to_chars(similarity, similarity + sizeof similarity, static_cast<double>(context.similarity),
                                   std::chars_format::fixed, 4).ptr;
    set("x-llmgate-cache", to_string(context.cache));
    set("x-llmgate-similarity", std::string_view(similarity, static_cast<std::size_t>(end - similarity)));
    if (!context.backend.empty()) set("x-llmgate-backend", context.backend);
  }

  static response_type json_response(boost::beast::http::status status, const boost::json::object& body) {
    return text_response("application/json", boost::json::serialize(body), status);
  }

  static response_type text_response(std::string_view content_type, std::string body,
                                     boost::beast::http::status status = boost::beast::http::status::ok) {
    response_type response(status, 11);
    response.set(boost::beast::http::field::content_type, content_type);
    response.body() = std::move(body);
    return response;
  }

  static response_type error_response(boost::beast::http::status status, std::string_view message,
                                      std::string_view type, std::string_view code, std::string_view param = {}) {
    return json_response(status, openai_error(message, type, code, param));
  }

  response_type too_large() {
    metrics_.record_status(413);
    auto response = error_response(boost::beast::http::status::payload_too_large,
                                    "The request body is larger than " + std::to_string(config_.max_body_bytes) +
                                        " bytes.",
                                    "invalid_request_error", "request_too_large");
    response.keep_alive(false);
    response.prepare_payload();
    return response;
  }

  response_type forbidden() const {
    return error_response(boost::beast::http::status::unauthorized, "This view needs the admin key.",
                          "invalid_request_error", "invalid_api_key");
  }

  // Response ids: chatcmpl-llmgate-<this run's prefix>-<answer number>.
  std::string response_id(std::uint64_t answer_number) const {
    return id_start_ + std::to_string(answer_number);
  }

  // The answer number of one of this run's response ids; 0 for another id.
  std::uint64_t answer_number_of(std::string_view id) const {
    if (!id.starts_with(id_start_)) return 0;
    id.remove_prefix(id_start_.size());
    std::uint64_t number = 0;
    const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), number);
    return ec == std::errc() && end == id.data() + id.size() ? number : 0;
  }

  static std::string hex(std::uint64_t value) {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
    return text;
  }

  static std::int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  gateway_config config_;
  request_log log_;
  std::unique_ptr<gateway_exact_cache> exact_;
  std::unique_ptr<gateway_semantic_cache> semantic_;
  admission_gate admission_;
  feedback_registry feedback_;
  gateway_metrics metrics_;
  std::unordered_map<std::string, std::string> tenant_of_key_;
  std::string id_start_;
  std::atomic<std::uint64_t> answers_{0};

  std::vector<std::unique_ptr<worker>> workers_;  // after the caches their pipelines use
  std::optional<tcp::acceptor> acceptor_;         // on the first worker's io_context
  std::atomic<bool> stopping_{false};
  std::jthread refresher_;  // the semantic cache's new weights (refresh_weights)
  std::mutex connections_mutex_;
  std::set<std::shared_ptr<connection>> connections_;
};

}  // namespace llmgate::inline v0
