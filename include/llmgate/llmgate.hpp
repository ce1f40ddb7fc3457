// llmgate's umbrella header: everything the library offers. Include the
// area headers (llmgate/index.hpp, ...) or single headers to compile less.
#pragma once

#include "llmgate/backend.hpp"
#include "llmgate/cache.hpp"
#include "llmgate/embed.hpp"
#include "llmgate/error.hpp"
#include "llmgate/index.hpp"
#include "llmgate/learn.hpp"
#include "llmgate/pipeline.hpp"
#include "llmgate/prompt.hpp"
#include "llmgate/route.hpp"
#include "llmgate/server.hpp"
#include "llmgate/simd.hpp"
#include "llmgate/metrics/latency_histogram.hpp"
#include "llmgate/store/snapshot_file.hpp"
#include "llmgate/version.hpp"
