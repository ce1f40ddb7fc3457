// chunk_handler: how a streamed answer reaches its consumer. Apart from
// chat.hpp because it needs Asio, which the core layers do not include.
#pragma once

#include <functional>  // std::function

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable

#include "llmgate/chat/chat.hpp"  // chat_chunk

namespace llmgate::inline v0 {

/// Receives each piece of a streamed answer as it arrives. The backend
/// awaits it before reading on, so a slow consumer slows the upstream read
/// (back-pressure) instead of piling chunks up in memory.
using chunk_handler = std::function<boost::asio::awaitable<void>(const chat_chunk&)>;

}  // namespace llmgate::inline v0
