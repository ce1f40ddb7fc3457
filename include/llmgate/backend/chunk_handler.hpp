// chunk_handler: how a streamed answer reaches its consumer, from a backend
// through the pipeline's stages. Beside the backends rather than in chat/
// because it needs Asio, which the core does not include.
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
