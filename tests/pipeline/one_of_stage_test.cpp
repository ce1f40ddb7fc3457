// one_of_stage: the stage chosen at construction answers, the other never
// runs, and a stage that passes on reaches the rest of the pipeline.
#include <string>  // std::string

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/test/unit_test.hpp>

#include "llmgate/backend/scripted_backend.hpp"
#include "llmgate/pipeline.hpp"

namespace {

using namespace llmgate;

// Answers by itself with its name.
struct answering_stage {
  std::string name;
  template <class Next>
  boost::asio::awaitable<chat_response> handle(chat_request&, request_context&, Next&) {
    chat_response response;
    response.content = "answered by " + name;
    co_return response;
  }
};

// Passes every request on, counting them.
struct passing_stage {
  int* passed;
  template <class Next>
  boost::asio::awaitable<chat_response> handle(chat_request& request, request_context& context, Next& next) {
    ++*passed;
    co_return co_await next(request, context);
  }
};

using either = one_of_stage<answering_stage, passing_stage>;
static_assert(Stage<either>);

chat_response from_backend(const chat_request&) {
  chat_response response;
  response.content = "answered by the backend";
  response.finish_reason = "stop";
  return response;
}

chat_request question() {
  chat_request request;
  request.model = "m";
  request.messages.push_back({.role = "user", .content = "hello"});
  return request;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(one_of_stage_test)

BOOST_AUTO_TEST_CASE(the_stage_it_holds_answers) {
  boost::asio::io_context io;
  scripted_backend model{"scripted", from_backend};
  int passed = 0;
  pipeline<either, backend_stage<scripted_backend>> first{either(answering_stage{"first"}), backend_stage(model)};
  BOOST_TEST(complete_blocking(io, first, question()).content == "answered by first");
  pipeline<either, backend_stage<scripted_backend>> second{either(passing_stage{&passed}), backend_stage(model)};
  BOOST_TEST(complete_blocking(io, second, question()).content == "answered by the backend");
  BOOST_TEST(passed == 1);
}

BOOST_AUTO_TEST_CASE(it_says_which_it_holds_and_composes_with_optional_stage) {
  boost::asio::io_context io;
  scripted_backend model{"scripted", from_backend};
  int passed = 0;
  BOOST_TEST(either(answering_stage{"a"}).index() == 0u);
  BOOST_TEST(either(passing_stage{&passed}).index() == 1u);
  pipeline<optional_stage<either>, backend_stage<scripted_backend>> off{
      optional_stage(either(answering_stage{"a"}), false), backend_stage(model)};
  BOOST_TEST(complete_blocking(io, off, question()).content == "answered by the backend");
}

BOOST_AUTO_TEST_SUITE_END()
