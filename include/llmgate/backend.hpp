// The backend area: chat and embedding types, the Backend concept, the
// HTTP client, the OpenAI-compatible, Ollama, Anthropic and llama.cpp
// (slots and slot files for PML prompts) adapters, retries,
// fallbacks, the circuit breaker, prices, the blocking facade, the HTTP
// embedder and the asynchronous embedders (AsyncEmbedder).
#pragma once

#include "llmgate/backend/anthropic_backend.hpp"
#include "llmgate/backend/any_backend.hpp"
#include "llmgate/backend/async_embedder.hpp"
#include "llmgate/backend/async_http_embedder.hpp"
#include "llmgate/backend/backend.hpp"
#include "llmgate/backend/backend_config.hpp"
#include "llmgate/backend/backend_error.hpp"
#include "llmgate/backend/backend_registry.hpp"
#include "llmgate/backend/blocking.hpp"
#include "llmgate/chat/chat.hpp"
#include "llmgate/backend/chunk_handler.hpp"
#include "llmgate/wire/openai_wire.hpp"
#include "llmgate/backend/chat_assembler.hpp"
#include "llmgate/backend/circuit_breaker.hpp"
#include "llmgate/backend/demo_backend.hpp"
#include "llmgate/backend/embedding.hpp"
#include "llmgate/backend/fallback.hpp"
#include "llmgate/backend/http_client.hpp"
#include "llmgate/backend/http_embedder.hpp"
#include "llmgate/backend/inline_embedder.hpp"
#include "llmgate/backend/llama_cpp_backend.hpp"
#include "llmgate/backend/llama_cpp_tokenizer.hpp"
#include "llmgate/backend/ndjson_parser.hpp"
#include "llmgate/backend/ollama_backend.hpp"
#include "llmgate/backend/openai_backend.hpp"
#include "llmgate/backend/price_table.hpp"
#include "llmgate/backend/retry.hpp"
#include "llmgate/backend/scripted_backend.hpp"
#include "llmgate/backend/sse_parser.hpp"
#include "llmgate/backend/url.hpp"
