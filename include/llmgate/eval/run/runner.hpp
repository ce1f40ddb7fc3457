// runner: sends every prompt of an evaluation plan to every candidate and
// records what came back in the run store, so that a run stopped or killed
// at any point resumes where it stopped.
//
//   llmgate::run_store store("run.sqlite");
//   llmgate::run_progress progress;  // lines on stderr
//   llmgate::evaluation_runner runner(plan, {{"small", small}, {"big", big}}, store, progress);
//   llmgate::run_blocking(io, runner.run());
//
// Requests, and their keys in the store:
//   warmup/<candidate>/<i>                       plan.warmup per candidate, prompts in turn
//   evaluation/<candidate>/<prompt>/<repetition> every prompt, plan.repetitions times
//   schedule/<candidate>/<tick>/<i>              plan.schedule.requests per candidate and tick
// Each phase ends before the next begins (a warm model before measuring).
// Within one, candidates take turns request by request, so that whatever
// changes over the run (the upstream's load, the hour) falls on all alike,
// and repetitions come round after the whole prompt set, so that a server's
// prompt cache does not answer a repetition from the request just before.
//
// At most plan.concurrency requests are in flight, over every candidate.
// Each one: store.begin (committed before the send: a run killed now finds
// it in flight and sends it again, once, its attempts one higher: 2 after
// one kill, 3 if the resend was cut off by a second), the prompt's
// template rendered, sampling = the plan's then the candidate's over it,
// model = candidate.model, streamed so the first content token's time is
// the TTFT; latency to the answer's end; tokens from its usage; a failure
// classified (request_outcome.hpp); plan.request_timeout_ms cancels the
// call and records a timeout; store.finish records it for good, and it is
// never sent again. Warm-ups are recorded too (kind warmup, which the
// summary leaves out), so a resumed run does not warm up again. The kit's
// own time per request (overhead_us) runs from taking the request to
// sending it (store.begin, rendering) and from the answer to store.finish.
//
// The latency schedule runs after the evaluation: tick 0 at once, then one
// tick every plan.schedule.every_seconds until duration_seconds. A resumed
// run sends the ticks not recorded yet, the first of them at once.
//
// Every template is rendered before anything is sent: an unknown variable
// or template throws llmgate::error (invalid_request) naming the prompt.
//
// Threads: run() on an io_context that one thread runs (the runner's
// counters have no lock); the backends may use that io_context too.
// run() is not to be cancelled: stop a run by stopping its io_context or
// ending the process, which the store makes safe at any point.
// plan.concurrency 0 counts as 1.
#pragma once

#include <chrono>       // std::chrono::steady_clock, system_clock, milliseconds
#include <cmath>        // std::ceil
#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t, std::uint64_t
#include <exception>    // std::exception_ptr, std::rethrow_exception
#include <functional>   // std::less
#include <map>          // std::map
#include <memory>       // std::shared_ptr
#include <optional>     // std::optional
#include <set>          // std::set
#include <string>       // std::string, std::to_string, std::stoull
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/asio/any_io_executor.hpp>              // net::any_io_executor
#include <boost/asio/as_tuple.hpp>                     // a wake-up's cancelled wait as a value
#include <boost/asio/awaitable.hpp>                    // net::awaitable
#include <boost/asio/co_spawn.hpp>                     // net::co_spawn
#include <boost/asio/deferred.hpp>                     // net::deferred, for the parallel group
#include <boost/asio/experimental/parallel_group.hpp>  // the call raced against its timeout
#include <boost/asio/steady_timer.hpp>                 // timeouts, ticks, wake-ups
#include <boost/asio/this_coro.hpp>                    // net::this_coro::executor
#include <boost/asio/use_awaitable.hpp>                // net::use_awaitable
#include <boost/json/serialize.hpp>                    // boost::json::serialize: sampling values as JSON text

#include "llmgate/backend/any_backend.hpp"         // any_backend
#include "llmgate/backend/http_client.hpp"         // http_client, for make_candidate_backends
#include "llmgate/chat/chat.hpp"                   // chat_request, chat_message, set_field
#include "llmgate/backend/chunk_handler.hpp"       // chat_chunk handlers
#include "llmgate/error.hpp"                       // llmgate::error, errc
#include "llmgate/eval/plan/evaluation_plan.hpp"   // evaluation_plan
#include "llmgate/eval/plan/prompt_rendering.hpp"  // render_prompts
#include "llmgate/eval/run/request_outcome.hpp"    // classify_failure, timeout_failure
#include "llmgate/eval/run/run_progress.hpp"       // run_progress, progress_counts
#include "llmgate/eval/run/run_records.hpp"        // planned_request, request_result
#include "llmgate/eval/run/run_store.hpp"          // run_store
#include "llmgate/backend/backend_registry.hpp"    // backend_registry, backend_setup, backend_config

namespace llmgate::inline v0 {

namespace net = boost::asio;

/// The backend that answers for each candidate, by candidate name.
using candidate_backends = std::map<std::string, any_backend, std::less<>>;

/// The backend of every candidate that names one of plan.backends, made by
/// `registry` with `client` as its connection pool, sending the candidate's
/// model (else the backend's). Candidates served from a GGUF file are left
/// out: the caller adds the backend of the engine it started. Throws
/// llmgate::error (invalid_request) naming a candidate whose backend is not
/// in plan.backends. The backends retry as their config's "retries" says, so
/// a 429 or a 5xx is recorded only when the retries did not cure it, and
/// the latency includes them: "retries": 0 records every failure.
inline candidate_backends make_candidate_backends(const evaluation_plan& plan, const backend_registry& registry,
                                                  const std::shared_ptr<http_client>& client,
                                                  const net::any_io_executor& executor) {
  candidate_backends made;
  for (const auto& candidate : plan.candidates) {
    if (!candidate.gguf.empty()) continue;
    const backend_config* config = nullptr;
    for (const auto& b : plan.backends)
      if (b.name == candidate.backend) config = &b;
    if (!config)
      throw error(errc::invalid_request, "candidate \"" + candidate.name + "\": no backend named \"" + candidate.backend + "\"");
    const backend_setup setup{.executor = executor, .client = client, .prices = {},
                              .model = candidate.model.empty() ? std::string_view(config->model) : std::string_view(candidate.model)};
    made.emplace(candidate.name, registry.make(*config, setup));
  }
  return made;
}

/// How many ticks a latency schedule has: one at 0 and one every
/// every_seconds before duration_seconds.
inline std::uint64_t schedule_ticks(const latency_schedule& schedule) {
  if (!schedule.enabled()) return 0;
  if (schedule.every_seconds <= 0) return 1;
  return static_cast<std::uint64_t>(std::ceil(schedule.duration_seconds / schedule.every_seconds - 1e-9));
}

/// Every request `plan` makes of its candidates, in the order they are sent
/// (see the top of this file). None when the prompt set is empty.
inline std::vector<planned_request> plan_requests(const evaluation_plan& plan) {
  std::vector<planned_request> planned;
  const auto prompts = static_cast<std::int64_t>(plan.prompts.size());
  if (prompts == 0) return planned;
  const auto number = [](auto n) { return std::to_string(n); };
  for (std::uint64_t i = 0; i < plan.warmup; ++i)
    for (const auto& c : plan.candidates)
      planned.push_back({"warmup/" + c.name + "/" + number(i), request_kind::warmup, c.name,
                         static_cast<std::int64_t>(i) % prompts, 0});
  for (std::uint64_t r = 0; r < plan.repetitions; ++r)
    for (std::int64_t p = 0; p < prompts; ++p)
      for (const auto& c : plan.candidates)
        planned.push_back({"evaluation/" + c.name + "/" + number(p) + "/" + number(r), request_kind::evaluation,
                           c.name, p, static_cast<std::int64_t>(r)});
  const std::uint64_t ticks = schedule_ticks(plan.schedule);
  for (std::uint64_t t = 0; t < ticks; ++t)
    for (std::uint64_t i = 0; i < plan.schedule.requests; ++i)
      for (const auto& c : plan.candidates)
        planned.push_back({"schedule/" + c.name + "/" + number(t) + "/" + number(i), request_kind::schedule, c.name,
                           static_cast<std::int64_t>((t * plan.schedule.requests + i) % plan.prompts.size()), 0});
  return planned;
}

/// The tick a schedule request's key names ("schedule/<candidate>/<tick>/<i>").
inline std::uint64_t schedule_tick(std::string_view key) {
  const std::size_t last = key.rfind('/');
  const std::size_t before = last == std::string_view::npos || last == 0 ? std::string_view::npos : key.rfind('/', last - 1);
  if (before == std::string_view::npos) throw error(errc::invalid_request, "not a schedule key: " + std::string(key));
  return std::stoull(std::string(key.substr(before + 1, last - before - 1)));
}

class evaluation_runner {
 public:
  /// `plan`, `store` and `progress` must outlive the runner. Throws
  /// llmgate::error (invalid_request) when a candidate has no backend or a
  /// prompt cannot be rendered: nothing has been sent then.
  evaluation_runner(const evaluation_plan& plan, candidate_backends backends, run_store& store, run_progress& progress)
      : plan_(&plan), backends_(std::move(backends)), store_(&store), progress_(&progress),
        prompts_(render_prompts(plan)) {
    for (const auto& c : plan.candidates)
      if (!backends_.contains(c.name))
        throw error(errc::invalid_request, "candidate \"" + c.name + "\" has no backend to ask");
  }

  /// The request sent for `planned`: its prompt's messages, the plan's
  /// sampling with the candidate's over it, the candidate's model, streamed.
  chat_request request_for(const planned_request& planned) const {
    chat_request request;
    const evaluation_candidate* candidate = plan_->find_candidate(planned.candidate);
    if (candidate) request.model = candidate->model;
    request.messages = prompts_.at(static_cast<std::size_t>(planned.prompt));
    request.stream = true;
    add_sampling(request.parameters, plan_->sampling);
    if (candidate) add_sampling(request.parameters, candidate->sampling);
    return request;
  }

  /// Plans every request in the store (those it holds stay as they are),
  /// then sends those not recorded yet: warm-up, evaluation, schedule.
  /// Throws what the store throws (the run cannot go on without it), after
  /// the requests in flight have ended.
  net::awaitable<void> run() {
    const std::vector<planned_request> planned = plan_requests(*plan_);
    store_->plan(planned);
    std::map<request_kind, progress_counts> counts;
    std::set<std::string_view> keys;  // the store may hold others' requests (judges')
    for (const auto& request : planned) {
      ++counts[request.kind].total;
      keys.insert(request.key);
    }
    for (const auto& result : store_->results()) {
      if (!keys.contains(result.request.key)) continue;
      auto& c = counts[result.request.kind];
      ++c.done;
      c.errors += !result.ok();
      c.resent += result.attempts > 1;
    }
    std::map<request_kind, std::vector<planned_request>> left;
    for (auto& request : store_->unfinished())
      if (keys.contains(request.key)) left[request.kind].push_back(std::move(request));

    const auto executor = co_await net::this_coro::executor;
    in_flight flight(executor, plan_->concurrency);
    for (const request_kind kind : {request_kind::warmup, request_kind::evaluation}) {
      if (counts[kind].total == 0) continue;
      progress_->start(to_string(kind), counts[kind]);
      for (const auto& request : left[kind]) {
        if (!co_await flight.acquire()) break;
        send_in_flight(executor, flight, request);
      }
      co_await end_phase(flight);
    }
    if (counts[request_kind::schedule].total > 0) co_await run_schedule(executor, flight, counts[request_kind::schedule],
                                                                       left[request_kind::schedule]);
  }

 private:
  // How many requests are in flight, with a wake-up for the one coroutine
  // that waits for a free place (the dispatcher); the first failure that
  // ends the run.
  struct in_flight {
    in_flight(const net::any_io_executor& executor, std::uint64_t limit)
        : limit(limit == 0 ? 1 : limit), wake(executor, net::steady_timer::time_point::max()) {}

    // False once a send failed: the run ends, nothing more is sent.
    net::awaitable<bool> acquire() {
      while (busy >= limit && !failure) co_await wake.async_wait(net::as_tuple(net::use_awaitable));
      if (failure) co_return false;
      ++busy;
      co_return true;
    }
    net::awaitable<void> drain() {
      while (busy > 0) co_await wake.async_wait(net::as_tuple(net::use_awaitable));
    }
    void release(std::exception_ptr failed) {
      --busy;
      if (failed && !failure) failure = failed;
      wake.cancel();  // its expiry stays: the next wait waits again
    }

    std::uint64_t limit;
    std::uint64_t busy = 0;
    net::steady_timer wake;
    std::exception_ptr failure;
  };

  static void add_sampling(json_fields& parameters, const boost::json::object& sampling) {
    for (const auto& [name, value] : sampling) {
      // The request's own fields are the runner's to set.
      if (name == "model" || name == "messages" || name == "stream") continue;
      set_field(parameters, name, boost::json::serialize(value));
    }
  }

  net::awaitable<void> end_phase(in_flight& flight) {
    co_await flight.drain();
    if (flight.failure) std::rethrow_exception(flight.failure);
    progress_->finish();
  }

  // One place taken in `flight`; given back when the send ends.
  void send_in_flight(const net::any_io_executor& executor, in_flight& flight, const planned_request& request) {
    net::co_spawn(executor, send(request, std::chrono::steady_clock::now()),
                  [&flight](std::exception_ptr failed) { flight.release(failed); });
  }

  net::awaitable<void> run_schedule(const net::any_io_executor& executor, in_flight& flight, progress_counts counts,
                                    const std::vector<planned_request>& left) {
    // The ticks left, in order, each with its requests.
    std::vector<std::vector<const planned_request*>> ticks;
    std::uint64_t last_tick = 0;
    for (const auto& request : left) {
      const std::uint64_t tick = schedule_tick(request.key);
      if (ticks.empty() || tick != last_tick) ticks.emplace_back();
      ticks.back().push_back(&request);
      last_tick = tick;
    }
    using clock = std::chrono::steady_clock;
    const auto every = std::chrono::duration_cast<clock::duration>(
        std::chrono::duration<double>(plan_->schedule.every_seconds));
    const auto start = clock::now();
    progress_->start(to_string(request_kind::schedule), counts,
                     ticks.empty() ? std::nullopt
                                   : std::optional(start + every * static_cast<std::int64_t>(ticks.size() - 1)));
    net::steady_timer next(executor);
    for (std::size_t t = 0; t < ticks.size() && !flight.failure; ++t) {
      next.expires_at(start + every * static_cast<std::int64_t>(t));
      co_await next.async_wait(net::use_awaitable);
      for (const planned_request* request : ticks[t]) {
        if (!co_await flight.acquire()) break;
        send_in_flight(executor, flight, *request);
      }
    }
    co_await end_phase(flight);
  }

  // Sends one request and records it. Throws only what the store throws.
  net::awaitable<void> send(planned_request planned, std::chrono::steady_clock::time_point picked) {
    using clock = std::chrono::steady_clock;
    const auto executor = co_await net::this_coro::executor;
    request_result result{.request = planned};
    result.attempts = store_->begin(planned.key);
    const chat_request request = request_for(planned);
    any_backend backend = backends_.find(planned.candidate)->second;
    const std::chrono::milliseconds timeout(plan_->request_timeout_ms);

    const auto sent = clock::now();
    result.started_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch()).count();
    double ttft_ms = 0;
    chunk_handler on_chunk = [&](const chat_chunk& chunk) -> net::awaitable<void> {
      if (ttft_ms == 0 && !chunk.content_delta.empty()) ttft_ms = milliseconds(clock::now() - sent);
      co_return;
    };
    net::steady_timer deadline(executor, timeout);
    // The first to end wins; the other is cancelled, and awaited.
    auto [order, failure, response, timer_code] =
        co_await net::experimental::make_parallel_group(net::co_spawn(executor, backend.stream(request, on_chunk), net::deferred),
                                                        deadline.async_wait(net::deferred))
            .async_wait(net::experimental::wait_for_one(), net::use_awaitable);
    const auto ended = clock::now();

    result.latency_ms = milliseconds(ended - sent);
    result.ttft_ms = ttft_ms;
    classified_failure failed;
    if (order[0] == 1 && !timer_code) failed = timeout_failure(timeout);
    else if (failure) failed = classify_failure(failure);
    if (failed.error == request_failure::none) {
      result.tokens_in = response.usage.prompt_tokens;
      result.tokens_out = response.usage.completion_tokens;
      result.response = std::move(response.content);
    } else {
      result.error = failed.error;
      result.http_status = failed.http_status;
      result.error_message = std::move(failed.message);
    }
    // The kit's own time: from taking the request to sending it, and from
    // the answer to recording it (the store's final write is after this).
    result.overhead_us = microseconds(sent - picked) + microseconds(clock::now() - ended);
    store_->finish(result);
    progress_->record(result);
  }

  static double milliseconds(std::chrono::steady_clock::duration span) {
    return std::chrono::duration<double, std::milli>(span).count();
  }
  static double microseconds(std::chrono::steady_clock::duration span) {
    return std::chrono::duration<double, std::micro>(span).count();
  }

  const evaluation_plan* plan_;
  candidate_backends backends_;
  run_store* store_;
  run_progress* progress_;
  std::vector<std::vector<chat_message>> prompts_;
};

}  // namespace llmgate::inline v0
