// The pipeline area: the Stage concept, pipeline<Stages...> composed at
// compile time, and the stages (exact cache, semantic cache, router, backend).
#pragma once

#include "llmgate/pipeline/backend_stage.hpp"
#include "llmgate/pipeline/cached_answer.hpp"
#include "llmgate/pipeline/exact_cache_stage.hpp"
#include "llmgate/pipeline/one_of_stage.hpp"
#include "llmgate/pipeline/optional_stage.hpp"
#include "llmgate/pipeline/pipeline.hpp"
#include "llmgate/pipeline/request_context.hpp"
#include "llmgate/pipeline/request_scope.hpp"
#include "llmgate/pipeline/router_stage.hpp"
#include "llmgate/pipeline/semantic_cache_stage.hpp"
#include "llmgate/pipeline/stage.hpp"
