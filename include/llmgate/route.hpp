// The route area: the model registry, preferences, task analysers (local
// and LLM), routing scores, feedback and the router that picks a model for
// each request; and what learns from labelled outcomes: the correctness
// predictors, the cost estimate, routing targets, the predictive router
// and the agreement cascade's plans.
#pragma once

#include "llmgate/route/cascade_plan.hpp"
#include "llmgate/route/correctness_predictor.hpp"
#include "llmgate/route/cost_estimate.hpp"
#include "llmgate/route/feedback_ledger.hpp"
#include "llmgate/route/llm_analyser.hpp"
#include "llmgate/route/local_analyser.hpp"
#include "llmgate/route/model_registry.hpp"
#include "llmgate/route/predictive_router.hpp"
#include "llmgate/route/preferences.hpp"
#include "llmgate/route/prompt_featurizer.hpp"
#include "llmgate/route/quality.hpp"
#include "llmgate/route/router.hpp"
#include "llmgate/route/routing_outcome.hpp"
#include "llmgate/route/routing_score.hpp"
#include "llmgate/route/routing_target.hpp"
#include "llmgate/route/short_answer.hpp"
#include "llmgate/route/task_analyser.hpp"
#include "llmgate/route/text_features.hpp"
