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
#include <utility>    // std::move, std::index_sequence

#include <boost/asio/awaitable.hpp>   // boost::asio::awaitable
#include <boost/asio/co_spawn.hpp>    // boost::asio::co_spawn
#include <boost/asio/io_context.hpp>  // boost::asio::io_context
#include <boost/asio/use_future.hpp>  // boost::asio::use_future

#include "llmgate/chat/chat.hpp"  // chat_request, chat_response
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

  // rests_ point at this pipeline: copies and moves take the stages only.
  pipeline(const pipeline& other) : stages_(other.stages_) {}
  pipeline(pipeline&& other) : stages_(std::move(other.stages_)) {}
  pipeline& operator=(const pipeline& other) {
    stages_ = other.stages_;
    return *this;
  }
  pipeline& operator=(pipeline&& other) {
    stages_ = std::move(other.stages_);
    return *this;
  }

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
        return past_the_end();
      else
        return self->template run<I>(request, context);
    }
  };

  // A coroutine, so that the error comes where the stage awaits `next`,
  // even through stages that are not coroutines (optional_stage).
  static boost::asio::awaitable<chat_response> past_the_end() {
    throw std::logic_error(
        "llmgate::pipeline: the last stage passed the request on; end a pipeline with a stage "
        "that answers, such as backend_stage");
    co_return chat_response{};
  }

  // Stage I's awaitable, which the caller awaits at once. Its `next` is
  // one of rests_, which live as long as the pipeline: no coroutine frame
  // per stage is needed to keep one alive.
  template <std::size_t I>
  boost::asio::awaitable<chat_response> run(chat_request& request, request_context& context) {
    return std::get<I>(stages_).handle(request, context, std::get<I>(rests_));
  }

  template <std::size_t... I>
  static std::tuple<rest<I + 1>...> rests_of(pipeline* self, std::index_sequence<I...>) {
    return {rest<I + 1>{self}...};
  }

  std::tuple<Stages...> stages_;
  decltype(rests_of(nullptr, std::index_sequence_for<Stages...>{})) rests_ =
      rests_of(this, std::index_sequence_for<Stages...>{});
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
