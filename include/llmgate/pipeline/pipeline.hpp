// pipeline<Stages...>: a request's way through stages fixed at compile time.
//
//   llmgate::pipeline answer{llmgate::exact_cache_stage(exact),
//                            llmgate::semantic_cache_stage(semantic),
//                            llmgate::backend_stage(openai)};
//   chat_response r = co_await answer(request, context);
//
// Each stage is handed the rest of the pipeline as `next` (see stage.hpp);
// the first stage runs first, the last one must answer. Stages are small
// views onto what they use (caches, backends), which the caller owns and
// keeps alive while the pipeline runs.
#pragma once

#include <chrono>     // std::chrono::seconds
#include <cstddef>    // std::size_t
#include <future>     // std::future_status
#include <stdexcept>  // std::logic_error
#include <tuple>      // std::tuple, std::get
#include <utility>    // std::move

#include <boost/asio/awaitable.hpp>   // boost::asio::awaitable
#include <boost/asio/co_spawn.hpp>    // boost::asio::co_spawn
#include <boost/asio/io_context.hpp>  // boost::asio::io_context
#include <boost/asio/use_future.hpp>  // boost::asio::use_future

#include "llmgate/backend/chat.hpp"
#include "llmgate/pipeline/request_context.hpp"
#include "llmgate/pipeline/stage.hpp"

namespace llmgate::inline v0 {

namespace detail {

// One static_assert per stage type, so that the compiler's note names the
// stage that is wrong ("in instantiation of check_stage<my_stage>").
template <class S>
consteval bool check_stage() {
  static_assert(Stage<S>,
                "llmgate::pipeline: this stage does not model llmgate::Stage. A stage needs "
                "`template <class Next> boost::asio::awaitable<chat_response> "
                "handle(chat_request&, request_context&, Next& next)`; see llmgate/pipeline/stage.hpp");
  return true;
}

}  // namespace detail

template <class... Stages>
class pipeline {
  static_assert(sizeof...(Stages) > 0,
                "llmgate::pipeline: give it at least one stage; the last one must answer (e.g. backend_stage)");
  static_assert((detail::check_stage<Stages>() && ...));

 public:
  explicit pipeline(Stages... stages) : stages_(std::move(stages)...) {}

  /// Runs the request through the stages. `request` and `context` must stay
  /// alive until the returned awaitable completes (co_await it at once).
  boost::asio::awaitable<chat_response> operator()(chat_request& request, request_context& context) {
    return run<0>(request, context);
  }

  /// The stage at position I, e.g. to read a cache stage's settings.
  template <std::size_t I>
  auto& stage() noexcept {
    return std::get<I>(stages_);
  }

 private:
  // What stage I-1 sees as `next`: the pipeline from stage I on.
  template <std::size_t I>
  struct rest {
    pipeline* self;
    boost::asio::awaitable<chat_response> operator()(chat_request& request, request_context& context) const {
      if constexpr (I == sizeof...(Stages))
        throw std::logic_error(
            "llmgate::pipeline: the last stage passed the request on; end a pipeline with a stage "
            "that answers, such as backend_stage");
      else
        return self->template run<I>(request, context);
    }
  };

  // A coroutine, so that `next` lives as long as stage I uses it.
  template <std::size_t I>
  boost::asio::awaitable<chat_response> run(chat_request& request, request_context& context) {
    rest<I + 1> next{this};
    co_return co_await std::get<I>(stages_).handle(request, context, next);
  }

  std::tuple<Stages...> stages_;
};

/// The blocking facade, for programs that are not coroutines: runs
/// `answer` on `io` and returns once the answer is complete; `context`
/// then says what the stages did. This thread runs io's handlers
/// meanwhile; other threads may run io too.
template <class... Stages>
chat_response complete_blocking(boost::asio::io_context& io, pipeline<Stages...>& answer,
                                chat_request request, request_context& context) {
  if (io.stopped()) io.restart();
  auto result = boost::asio::co_spawn(io, answer(request, context), boost::asio::use_future);
  while (result.wait_for(std::chrono::seconds(0)) != std::future_status::ready) io.run_one();
  return result.get();
}

template <class... Stages>
chat_response complete_blocking(boost::asio::io_context& io, pipeline<Stages...>& answer,
                                chat_request request) {
  request_context context;
  return complete_blocking(io, answer, std::move(request), context);
}

}  // namespace llmgate::inline v0
