// The prompt area: the Prompt Markup Language (PML). Schemas declare the
// reusable modules of prompts; prompts import them; the compiler turns a
// prompt into a chat request whose layout tells the backends where the
// modules are, so that model servers reuse their attention state.
#pragma once

#include "llmgate/prompt/builder.hpp"
#include "llmgate/prompt/compiler.hpp"
#include "llmgate/prompt/pml_error.hpp"
#include "llmgate/prompt/pml_parser.hpp"
#include "llmgate/prompt/prompt_document.hpp"
#include "llmgate/prompt/prompt_layout.hpp"
#include "llmgate/prompt/prompt_statistics.hpp"
#include "llmgate/prompt/schema.hpp"
#include "llmgate/prompt/schema_check.hpp"
#include "llmgate/prompt/schema_registry.hpp"
#include "llmgate/prompt/tokenizer.hpp"
