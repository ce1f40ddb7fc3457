// Runs an example program against the in-test upstream server, so that
// CTest can run the pipeline examples without a real model server:
//   llmgate_example_upstream PROGRAM [ARGS...]
// In ARGS, @UPSTREAM@ becomes the upstream's OpenAI-compatible base URL
// (answers "Answer to: <the last user message>") and @FAILING@ one whose
// every request fails with 503. Exits with the program's status.
#include <sys/wait.h>  // waitpid (POSIX)
#include <unistd.h>    // fork, execv (POSIX)

#include <cstdio>   // std::perror
#include <string>   // std::string
#include <vector>   // std::vector

#include "backend/upstream_server.hpp"

int main(int argc, char** argv) {
  using llmgate::test::reply;
  if (argc < 2) return 2;
  llmgate::test::upstream_server upstream;
  upstream.on("/v1/chat/completions", [](const llmgate::test::received_request& request) {
    const auto chat = llmgate::parse_chat_request(request.json());
    const std::string answer = "Answer to: " + llmgate::content_text(chat.messages.back());
    return chat.stream ? reply::chat_stream({answer}) : reply::chat(answer);
  });
  upstream.on("/failing/v1/chat/completions",
              reply::openai_error(503, "server_error", "overloaded", "The server is overloaded."));
  upstream.start();

  std::vector<std::string> arguments(argv + 1, argv + argc);
  for (auto& argument : arguments) {
    if (argument == "@UPSTREAM@") argument = upstream.url("/v1");
    if (argument == "@FAILING@") argument = upstream.url("/failing/v1");
  }
  std::vector<char*> child_argv;
  for (auto& argument : arguments) child_argv.push_back(argument.data());
  child_argv.push_back(nullptr);

  const pid_t child = fork();
  if (child == 0) {
    execv(child_argv[0], child_argv.data());
    std::perror("execv");
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
