// The server area: the OpenAI-compatible gateway over the pipeline, its
// configuration, limits, metrics, request log and dashboard.
#pragma once

#include "llmgate/server/http/admission.hpp"
#include "llmgate/server/client_failure.hpp"
#include "llmgate/server/gateway_config.hpp"
#include "llmgate/server/operations/dashboard.hpp"
#include "llmgate/server/feedback_registry.hpp"
#include "llmgate/server/gateway.hpp"
#include "llmgate/server/operations/large_allocations.hpp"
#include "llmgate/server/operations/metrics.hpp"
#include "llmgate/server/http/openai_errors.hpp"
#include "llmgate/server/operations/request_log.hpp"
#include "llmgate/server/http/response_bytes.hpp"
#include "llmgate/server/http/sse_stream.hpp"
