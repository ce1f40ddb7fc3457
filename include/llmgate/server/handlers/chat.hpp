// POST /v1/chat/completions, /v1/messages and /v1/responses: a chat request
// through the gateway's pipeline (the user's stages, the router, the exact
// and semantic caches, the model's backends), answered whole or streamed
// as server-sent events, in the form of the API asked: OpenAI's chat
// completions, Anthropic's Messages or OpenAI's Responses, each a dialect
// (handlers/openai_chat_dialect.hpp, anthropic_messages_dialect.hpp,
// openai_responses_dialect.hpp) that reads the body and writes the answers
// and errors. What follows is the same for all three.
//
// Before the pipeline: the body is parsed and its standard fields checked
// (400 naming the param), the PML prompt it carries (a "pml" field or a
// message that is a <prompt> document) compiled into it against the
// gateway's schemas (server/read_chat_request.hpp; 400 naming "pml" or
// "messages[i].content" with the line and column), the model checked
// (404: a configured model, or
// "auto" and the router's aliases when there is a router; 400 for an
// embedding model), the request's own routing preferences read (header
// x-llmgate-preferences, else the body's "llmgate_preferences", which is
// not sent on; 400 when they cannot be read), its cache directives and
// namespace read (headers Cache-Control and x-llmgate-cache-namespace, else
// the body's "llmgate_cache_control" and "llmgate_cache_namespace", which
// are not sent on either; 400 when they cannot be read; see
// server/http/cache_control.hpp), the tenant's spending limits checked
// (429 naming the limit, with Retry-After: spending/spending_ledger.hpp),
// and a place taken in the admission gate (429 with Retry-After when
// full). The pipeline runs under the request timeout (504). Responses say what happened in
// x-llmgate-cache, x-llmgate-similarity and x-llmgate-backend, and for a
// routed request x-llmgate-model (the model chosen) and x-llmgate-route
// (why, in short), and x-llmgate-cache-control and x-llmgate-cache-namespace
// echo what the request asked of the caches; the usage carries cost_usd,
// and saved_usd for a cached
// answer; a stream ends with the usage chunk when the request's
// stream_options.include_usage asks for it. The handler tells the session what the request did
// (exchange::outcome); the session counts and logs every response once.
// The request's W3C trace context (a client's traceparent continued, or a
// trace begun; chat/trace_context.hpp) goes upstream with it and into the
// log, so that one request can be followed into a model server's logs.
// A fresh answer to a PML prompt (not a cached one, streamed or not) gives
// its usage to the gateway's prompt_statistics; a fresh answer's cost and
// tokens are charged to its tenant's spending.
//
// The chat fields are read and written by the dialect, and here in
// take_field and saved_usd only.
#pragma once

#include <algorithm>    // std::find
#include <chrono>       // std::chrono
#include <charconv>     // std::to_chars
#include <cstdint>      // std::int64_t, std::uint64_t
#include <exception>    // std::exception_ptr
#include <optional>     // std::optional
#include <stdexcept>    // std::invalid_argument
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::pair, std::move

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable
#include <boost/asio/this_coro.hpp>  // boost::asio::this_coro::reset_cancellation_state
#include <boost/beast/core/string.hpp>  // boost::beast::iequals
#include <boost/json/parse.hpp>      // boost::json::parse

#include "llmgate/backend/backend_error.hpp"          // backend_error
#include "llmgate/chat/chat.hpp"                      // chat_request, chat_response, chat_chunk, find_field
#include "llmgate/wire/openai_wire.hpp"               // parse_chat_request, append_completion_body, usage_chunk_asked
#include "llmgate/chat/request_error.hpp"             // request_error
#include "llmgate/pipeline/cached_answer.hpp"         // unix_seconds_now
#include "llmgate/pipeline/request_context.hpp"       // request_context
#include "llmgate/prompt/prompt_statistics.hpp"       // prompt_statistics
#include "llmgate/prompt/schema_registry.hpp"         // schema_registry
#include "llmgate/prompt/tokenizer.hpp"               // estimated_tokenizer
#include "llmgate/route/preferences.hpp"              // preferences
#include "llmgate/route/router.hpp"                   // routing_decision
#include "llmgate/server/http/admission.hpp"          // admission_gate
#include "llmgate/server/http/cache_control.hpp"      // parse_cache_control, cache_control_text
#include "llmgate/server/client_failure.hpp"          // client_failure_of
#include "llmgate/server/gateway_config.hpp"          // gateway_config
#include "llmgate/server/handlers/openai_chat_dialect.hpp"  // openai_chat_dialect, the default
#include "llmgate/server/http/exchange.hpp"           // exchange, handler_result
#include "llmgate/server/feedback_registry.hpp"       // feedback_registry
#include "llmgate/server/operations/metrics.hpp"      // gateway_metrics, request_outcome
#include "llmgate/server/model_backends.hpp"          // model_index
#include "llmgate/server/operations/request_log.hpp"  // request_log
#include "llmgate/server/response_ids.hpp"            // response_ids
#include "llmgate/server/http/responses.hpp"          // text_response, http_response
#include "llmgate/server/routing/gateway_router.hpp"  // route_summary
#include "llmgate/server/spending/spending_ledger.hpp"  // spending_ledger
#include "llmgate/server/spending/spending_refusal_response.hpp"  // spending_refusal_response

namespace llmgate::inline v0 {

/// What every worker's chat handler shares; owned by the gateway.
struct chat_services {
  const gateway_config* config;
  const model_index* models;
  admission_gate* admission;
  feedback_registry* feedback;
  gateway_metrics* metrics;
  request_log* log;
  response_ids* ids;
  const schema_registry* schemas = nullptr;  ///< the PML schemas; null: none
  prompt_statistics* prompts = nullptr;      ///< fed with fresh PML answers' usage; null: none
  spending_ledger* spending = nullptr;       ///< the tenants' spending limits; null: none
};

/// Pipeline: the worker's pipeline (pipeline.hpp), alive while the handler is.
/// Dialect: the API's wire form (openai_chat_dialect.hpp says what it provides).
template <class Pipeline, class Dialect = openai_chat_dialect>
class chat_handler {
 public:
  chat_handler(const chat_services& services, Pipeline& pipeline) : s_(services), pipeline_(&pipeline) {}

  handler_result operator()(exchange& e) { return answer(e); }

 private:
  handler_result answer(exchange& e) {
    namespace http = boost::beast::http;
    const auto started = std::chrono::steady_clock::now();
    const request_headers headers = request_headers::of(e.request);
    request_outcome outcome{.tenant = *e.tenant,
                            .trace = trace_context::continue_or_begin(headers.traceparent, headers.tracestate)};
    // The outcome goes to the session, whose record of the response feeds
    // the metrics and the log (session.hpp): record() for a streamed
    // answer, finish() for a whole one.
    const auto record = [&](http_status status) {
      outcome.status = static_cast<unsigned>(status);
      outcome.latency = std::chrono::steady_clock::now() - started;
      e.outcome = outcome;
    };
    const auto finish = [&](http_response response) {
      record(response.result());
      return std::optional<http_response>(std::move(response));
    };

    chat_request request;
    if (auto problem = parse_chat_body(e.request.body(), request)) co_return finish(std::move(*problem));
    if (!known_model(request.model))
      co_return finish(refusal(http_status::not_found,
                               "The model `" + request.model + "` does not exist or you do not have access to it.",
                               "invalid_request_error", "model_not_found", "model"));
    if (embedding_model(request.model))
      co_return finish(refusal(http_status::bad_request,
                               "`" + request.model + "` is an embedding model: ask /v1/embeddings, or a chat model here.",
                               "invalid_request_error", "model_not_supported", "model"));
    request_settings settings;
    if (auto problem = read_settings(headers, request, settings)) co_return finish(std::move(*problem));
    request.trace = outcome.trace;
    if (auto refused = over_spending_limit(*e.tenant, request)) co_return finish(std::move(*refused));

    const std::chrono::milliseconds timeout(s_.config->limits.request_timeout_ms);
    auto ticket = s_.admission->try_enter();  // a free place, most often: no wait, no coroutine frame
    if (!ticket) {
      auto waited = co_await s_.admission->enter(timeout);
      ticket.swap(waited);
    }
    if (!ticket) {
      auto response = refusal(http_status::too_many_requests,
                              "The gateway is at its limit of concurrent requests; retry shortly.", "rate_limit_error",
                              "rate_limit_exceeded");
      response.set(http::field::retry_after, "1");
      co_return finish(std::move(response));
    }

    const std::int64_t created = unix_seconds_now();
    const std::uint64_t answer_number = s_.ids->next();
    typename Dialect::stream sse = Dialect::open_stream(e.out, *s_.ids, answer_number, created, e.keep_alive);
    outcome.cache_controlled = !settings.cache_namespace.empty() || settings.cache_control != cache_directives{};
    request_context context{.tenant = *e.tenant,
                            .cache_namespace = std::move(settings.cache_namespace),
                            .cache_control = settings.cache_control};
    if (settings.route_preferences) context.route_preferences = &*settings.route_preferences;
    if (request.stream) {
      context.on_chunk = [&](const chat_chunk& chunk) -> boost::asio::awaitable<void> {
        if (!sse.started()) {
          outcome_headers(context, [&](auto name, auto value) { sse.header(name, value); });
          co_await sse.start(request.model);
        }
        if (chunk.content_delta.empty() && !chunk.finish_reason && chunk.tool_call_deltas_json.empty())
          co_return;  // usage: sent once at the end, with its cost
        co_await sse.send(chunk);
      };
    }

    // The pipeline runs in this coroutine; past the deadline, what it waits
    // for is cancelled and it ends by throwing.
    e.deadline.arm(timeout);
    chat_response response;
    std::exception_ptr failure;
    try {
      response = co_await (*pipeline_)(request, context);
    } catch (...) {
      failure = std::current_exception();
    }
    const bool timed_out = e.deadline.disarm();
    if (timed_out) co_await boost::asio::this_coro::reset_cancellation_state();  // to answer the 504
    outcome.cache = context.cache;
    outcome.backend = context.backend;
    if (context.route) {
      outcome.model = context.route->model;
      if (s_.log->requests_enabled()) outcome.route = context.route->reasons();
    }

    if (failure || timed_out) {
      std::optional<std::chrono::seconds> retry_after;
      auto [status, body] = !timed_out ? error_of(failure, outcome, retry_after)
                                       : std::pair(http_status::gateway_timeout,
                                                   openai_error("The model did not answer within " +
                                                                    std::to_string(timeout.count()) + " ms.",
                                                                "timeout_error", "timeout"));
      if (!sse.started()) {
        auto reply = Dialect::error(status, body);
        if (!outcome.backend.empty()) reply.set("x-llmgate-backend", outcome.backend);
        if (retry_after) reply.set(http::field::retry_after, std::to_string(retry_after->count()));
        co_return finish(std::move(reply));
      }
      co_await Dialect::fail(sse, status, body);  // the client sees the error and the end of the stream
      record(status);
      co_return std::nullopt;
    }

    outcome.prompt_tokens = response.usage.prompt_tokens;
    outcome.completion_tokens = response.usage.completion_tokens;
    outcome.cost_usd = response.cost_usd;
    outcome.saved_usd = context.saved_usd;
    if (request.layout && context.cache == cache_outcome::miss && s_.prompts)
      s_.prompts->record(*request.layout, response.usage);
    if (context.feedback) s_.feedback->remember(answer_number, *e.tenant, std::move(context.feedback));
    if (context.cache == cache_outcome::miss && limits_spending())
      s_.spending->charge(*e.tenant, response.cost_usd, response.usage.prompt_tokens, response.usage.completion_tokens);
    if (request.stream) {
      if (!sse.started()) {  // an answer with nothing to stream
        outcome_headers(context, [&](auto name, auto value) { sse.header(name, value); });
        co_await sse.start(request.model);
      }
      const std::optional<double> saved = saved_usd(context);
      co_await Dialect::end(sse, request, response, saved);
      record(http_status::ok);
      co_return std::nullopt;
    }
    auto reply = text_response("application/json", Dialect::body(response, sse, saved_usd(context)));
    outcome_headers(context, [&](auto name, auto value) { reply.insert(http::field::unknown, name, value); });
    co_return finish(std::move(reply));
  }

  // The 429 of a request its tenant's spending limits refuse (counted as
  // one request when they admit it); none for a tenant without limits.
  std::optional<http_response> over_spending_limit(const std::string& tenant, const chat_request& request) const {
    if (!limits_spending()) return std::nullopt;
    std::uint64_t prompt_tokens = 0;
    if (s_.spending->counts_input(tenant))
      for (const auto& message : request.messages) prompt_tokens += estimated_tokenizer{}.count(message.content);
    const auto refused = s_.spending->admit(tenant, prompt_tokens);
    if (!refused) return std::nullopt;
    return spending_refusal_response(tenant, *refused, s_.spending->now(), Dialect::error);
  }

  bool limits_spending() const noexcept { return s_.spending && !s_.spending->empty(); }

  bool embedding_model(const std::string& model) const {
    const model_config* configured = s_.config->find_model(model);
    return configured && configured->mode == model_mode::embedding;
  }

  bool known_model(const std::string& model) const {
    if (s_.models->find(model) != model_index::npos) return true;
    const auto& router = s_.config->router;
    return router && std::find(router->aliases.begin(), router->aliases.end(), model) != router->aliases.end();
  }

  // The headers this handler reads, found in one pass over the request's
  // fields rather than a lookup each. Their names' lengths differ, so a
  // field is compared with one name at most.
  struct request_headers {
    std::string_view preferences, cache_control, cache_namespace, traceparent, tracestate;

    static request_headers of(const http_request& request) {
      request_headers found;
      for (const auto& field : request) {
        const std::string_view name(field.name_string().data(), field.name_string().size());
        const auto [wanted, into] = wanted_by_length(name.size(), found);
        if (into && boost::beast::iequals(name, wanted)) *into = {field.value().data(), field.value().size()};
      }
      return found;
    }

   private:
    static std::pair<std::string_view, std::string_view*> wanted_by_length(std::size_t length, request_headers& found) {
      switch (length) {
        case 21: return {"x-llmgate-preferences", &found.preferences};
        case 13: return {"cache-control", &found.cache_control};
        case 25: return {"x-llmgate-cache-namespace", &found.cache_namespace};
        case 11: return {"traceparent", &found.traceparent};
        case 10: return {"tracestate", &found.tracestate};
        default: return {{}, nullptr};
      }
    }
  };

  // What a request asks of the gateway beside the chat: settings of
  // llmgate's own, each a header or, for clients that cannot set headers,
  // a body field.
  struct request_settings {
    std::optional<preferences> route_preferences;  ///< x-llmgate-preferences, llmgate_preferences
    cache_directives cache_control;                ///< Cache-Control, llmgate_cache_control
    std::string cache_namespace;                   ///< x-llmgate-cache-namespace, llmgate_cache_namespace
  };

  // Reads the request's settings, or returns the 400 naming the one that
  // cannot be read.
  static std::optional<http_response> read_settings(const request_headers& headers, chat_request& request,
                                                    request_settings& settings) {
    if (auto problem = read_setting(headers.preferences, request, "x-llmgate-preferences", "llmgate_preferences",
                                    "invalid_preferences",
                                    [&](std::string_view spec) { settings.route_preferences = preferences::parse(spec); }))
      return problem;
    if (auto problem = read_setting(headers.cache_control, request, "cache-control", "llmgate_cache_control",
                                    "invalid_cache_control",
                                    [&](std::string_view text) { settings.cache_control = parse_cache_control(text); }))
      return problem;
    return read_setting(headers.cache_namespace, request, "x-llmgate-cache-namespace", "llmgate_cache_namespace",
                        "invalid_cache_namespace",
                        [&](std::string_view name) {
                          check_cache_namespace(name);
                          settings.cache_namespace = name;
                        });
  }

  // One setting: `read` is given the header's text (`sent`), else the body field's
  // (taken out of the request either way, so that it is neither sent on
  // nor part of the cache scope), unless both are empty; it throws
  // std::invalid_argument for a value it refuses.
  template <class Read>
  static std::optional<http_response> read_setting(std::string_view sent, chat_request& request, std::string_view header,
                                                   std::string_view field_name, std::string_view code, Read read) {
    const auto refuse = [&](const std::invalid_argument& problem, std::string_view param) {
      return std::optional(refusal(http_status::bad_request, problem.what(), "invalid_request_error", code, param));
    };
    std::optional<std::string> field;
    try {
      field = take_field(request, field_name);
    } catch (const std::invalid_argument& problem) {
      return refuse(problem, field_name);
    }
    const std::string_view text = !sent.empty() ? sent : field ? std::string_view(*field) : std::string_view();
    if (text.empty()) return std::nullopt;
    try {
      read(text);
    } catch (const std::invalid_argument& problem) {
      return refuse(problem, !sent.empty() ? header : field_name);
    }
    return std::nullopt;
  }

  // ---- the chat fields: read and written here only --------------------------

  // Fills `request` from a chat body (its PML compiled against the
  // gateway's schemas, where the dialect reads PML), or returns the 400 to
  // answer, naming the field at fault.
  std::optional<http_response> parse_chat_body(const std::string& body, chat_request& request) const {
    static const schema_registry none;
    try {
      request = Dialect::read(body, s_.schemas ? *s_.schemas : none, s_.config->limits.max_json_depth);
    } catch (const request_error& e) {
      return refusal(http_status::bad_request, e.what(), "invalid_request_error", e.openai_code(), e.param());
    }
    return std::nullopt;
  }

  // A refusal in the dialect's form.
  static http_response refusal(http_status status, std::string_view message, std::string_view type,
                               std::string_view code, std::string_view param = {}) {
    return Dialect::error(status, openai_error(message, type, code, param));
  }

  // The body's field `name` (one of llmgate's own), removed from the
  // request's parameters: its string. Throws std::invalid_argument when
  // it is not a string.
  static std::optional<std::string> take_field(chat_request& request, std::string_view name) {
    auto& fields = request.parameters;
    const auto found = std::find_if(fields.begin(), fields.end(), [&](const json_field& f) { return f.name == name; });
    if (found == fields.end()) return std::nullopt;
    boost::system::error_code ec;
    const boost::json::value value = boost::json::parse(found->json, ec);
    fields.erase(found);
    if (!value.is_string()) throw std::invalid_argument("`" + std::string(name) + "` must be a string.");
    return std::string(value.get_string());
  }

  // What a cached answer saved; none for a fresh one.
  static std::optional<double> saved_usd(const request_context& context) {
    return context.cache != cache_outcome::miss ? std::optional(context.saved_usd) : std::nullopt;
  }

  // ---------------------------------------------------------------------------

  // The status and error object a failed pipeline answers with, streamed
  // or not, and the Retry-After to send with it: a backend failure as
  // client_failure_of says (an upstream's 4xx keeps its status), 500
  // otherwise. What failed and where (backend, URL) goes to the log only.
  std::pair<http_status, boost::json::object> error_of(std::exception_ptr failure, request_outcome& outcome,
                                                       std::optional<std::chrono::seconds>& retry_after) const {
    try {
      std::rethrow_exception(failure);
    } catch (const backend_error& e) {
      outcome.backend = e.backend();
      s_.log->event("backend_failure", {{"tenant", outcome.tenant}, {"backend", e.backend()},
                                        {"upstream_status", e.status()}, {"error", e.what()}});
      client_failure answer = client_failure_of(e);
      retry_after = answer.retry_after;
      return {answer.status, std::move(answer.body)};
    } catch (const std::exception& e) {
      s_.log->event("gateway_failure", {{"tenant", outcome.tenant}, {"error", e.what()}});
      return {http_status::internal_server_error,
              openai_error("The gateway failed to answer the request.", "server_error", "internal_error")};
    }
  }

  // x-llmgate-cache, -similarity and -backend, and for a routed request
  // -model and -route, through `set(name, value)`: names Beast does not
  // know, each set once, so a whole response inserts them without a lookup.
  template <class SetHeader>
  static void outcome_headers(const request_context& context, SetHeader set) {
    char similarity[32];
    const auto end = std::to_chars(similarity, similarity + sizeof similarity, static_cast<double>(context.similarity),
                                   std::chars_format::fixed, 4).ptr;
    set("x-llmgate-cache", to_string(context.cache));
    set("x-llmgate-similarity", std::string_view(similarity, static_cast<std::size_t>(end - similarity)));
    if (!context.backend.empty()) set("x-llmgate-backend", context.backend);
    if (const std::string control = cache_control_text(context.cache_control); !control.empty())
      set("x-llmgate-cache-control", std::string_view(control));
    if (!context.cache_namespace.empty()) set("x-llmgate-cache-namespace", context.cache_namespace);
    if (context.route) {
      set("x-llmgate-model", context.route->model);
      const std::string summary = route_summary(*context.route);
      set("x-llmgate-route", std::string_view(summary));
    }
  }

  const chat_services& s_;
  Pipeline* pipeline_;
};

}  // namespace llmgate::inline v0
