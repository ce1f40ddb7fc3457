// chunk_log: the chunks of a streamed answer, collected for assertions
// after the stream (a chunk_handler that keeps what it is given).
#pragma once

#include <string>  // std::string
#include <vector>  // std::vector

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable

#include "llmgate/backend/chunk_handler.hpp"  // chunk_handler
#include "llmgate/chat/chat.hpp"              // chat_chunk

namespace llmgate::test {

struct chunk_log {
  std::vector<chat_chunk> chunks;

  chunk_handler handler() {
    return [this](const chat_chunk& chunk) -> boost::asio::awaitable<void> {
      chunks.push_back(chunk);
      co_return;
    };
  }

  std::string text() const {
    std::string joined;
    for (const auto& chunk : chunks) joined += chunk.content_delta;
    return joined;
  }
};

}  // namespace llmgate::test
