// The route area: the model registry, preferences, task analysers (local
// and LLM), routing scores, feedback and the router that picks a model for
// each request.
#pragma once

#include "llmgate/route/feedback_ledger.hpp"
#include "llmgate/route/llm_analyser.hpp"
#include "llmgate/route/local_analyser.hpp"
#include "llmgate/route/model_registry.hpp"
#include "llmgate/route/preferences.hpp"
#include "llmgate/route/quality.hpp"
#include "llmgate/route/router.hpp"
#include "llmgate/route/routing_score.hpp"
#include "llmgate/route/task_analyser.hpp"
#include "llmgate/route/text_features.hpp"
