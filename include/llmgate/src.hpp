// The network side's compiled part, for a program built with
// LLMGATE_SEPARATE_COMPILATION (llmgate/detail/separate_compilation.hpp):
// include this in exactly one of its files, and nowhere else.
#pragma once

#ifndef LLMGATE_SEPARATE_COMPILATION
#error "llmgate/src.hpp is for programs built with LLMGATE_SEPARATE_COMPILATION defined in every file"
#endif

#include "llmgate/backend/impl/http_client.hpp"
#include "llmgate/backend/impl/openai_backend.hpp"
