// The server area: the OpenAI-compatible gateway over the pipeline, its
// configuration, limits, metrics, request log and dashboard.
#pragma once

#include "llmgate/server/admission.hpp"
#include "llmgate/server/backend_failures.hpp"
#include "llmgate/server/config.hpp"
#include "llmgate/server/dashboard.hpp"
#include "llmgate/server/feedback_registry.hpp"
#include "llmgate/server/gateway.hpp"
#include "llmgate/server/large_allocations.hpp"
#include "llmgate/server/metrics.hpp"
#include "llmgate/server/openai_errors.hpp"
#include "llmgate/server/request_log.hpp"
#include "llmgate/server/response_bytes.hpp"
#include "llmgate/server/sse_stream.hpp"
