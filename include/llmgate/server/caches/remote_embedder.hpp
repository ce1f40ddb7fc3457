// The gateway's embedder of kind "openai": async_http_embedder over
// openai_backend, for any OpenAI-compatible /embeddings endpoint
// (llama.cpp's server, Ollama's /v1, vLLM, OpenAI). Each worker makes its
// own on its executor, with a connection pool of its own: the embedding
// requests of a worker's requests are awaited on that worker's io thread,
// which serves others meanwhile, and a batch only ever joins texts of one
// worker (those that arrive in one turn of its event loop).
//
// probe_remote_embedder() is the check at start: one embedding, on an
// io_context of its own, refused with the config field that is wrong.
#pragma once

#include <chrono>     // std::chrono::seconds
#include <exception>  // std::exception_ptr, std::rethrow_exception
#include <memory>     // std::make_shared
#include <string>     // std::string, std::to_string
#include <utility>    // std::move

#include <boost/asio/any_io_executor.hpp>  // boost::asio::any_io_executor
#include <boost/asio/co_spawn.hpp>         // boost::asio::co_spawn
#include <boost/asio/io_context.hpp>       // boost::asio::io_context (the probe's)

#include "llmgate/backend/async_http_embedder.hpp"  // async_http_embedder
#include "llmgate/backend/http_client.hpp"          // http_client, http_client_options
#include "llmgate/backend/openai_backend.hpp"       // openai_backend
#include "llmgate/error.hpp"                        // llmgate::error, errc
#include "llmgate/server/caches/cache_config.hpp"   // embedder_config

namespace llmgate::inline v0 {

using gateway_remote_embedder = async_http_embedder<openai_backend>;

/// The embedder `config` (kind "openai") describes, on `executor` with a
/// connection pool of its own.
inline gateway_remote_embedder make_remote_embedder(const embedder_config& config,
                                                    const boost::asio::any_io_executor& executor,
                                                    http_client_options client = {}) {
  return gateway_remote_embedder(
      {.model = config.model, .dimension = config.dimension, .endpoint = config.base_url + "/embeddings"},
      openai_backend(std::make_shared<http_client>(executor, std::move(client)),
                     openai_options{.name = "embedder", .base_url = config.base_url, .api_key = config.api_key}));
}

/// Asks the embedder `config` describes for one embedding, within a few
/// seconds. Throws llmgate::error naming semantic_cache.embedder.base_url
/// and the URL when nothing answers there or the answer is no embedding
/// (a server without the endpoint, or without the model), and
/// semantic_cache.embedder.dimension when the vector is of another length.
inline void probe_remote_embedder(const embedder_config& config) {
  boost::asio::io_context io;
  const auto embedder = make_remote_embedder(
      config, io.get_executor(),
      {.connect_timeout = std::chrono::seconds(2), .first_byte_timeout = std::chrono::seconds(10),
       .idle_timeout = std::chrono::seconds(10)});
  std::exception_ptr failure;
  boost::asio::co_spawn(io, embedder.probe(), [&](std::exception_ptr e) { failure = e; });
  io.run();
  if (!failure) return;
  const std::string where = "config: semantic_cache.embedder";
  try {
    std::rethrow_exception(failure);
  } catch (const error& problem) {
    if (problem.code() == errc::dimension_mismatch)
      throw error(errc::invalid_request, where + ".dimension " + std::to_string(config.dimension) +
                                             " is not the length of model '" + config.model + "''s vectors: " +
                                             problem.what());
    throw error(errc::invalid_request,
                where + ".base_url " + config.base_url + " does not answer with embeddings: " + problem.what());
  }
}

}  // namespace llmgate::inline v0
