// The index area: metrics, the VectorIndex concept, flat and HNSW indexes.
#pragma once

#include "llmgate/index/flat_index.hpp"
#include "llmgate/index/hnsw_index.hpp"
#include "llmgate/index/metric.hpp"
#include "llmgate/index/top_k.hpp"
#include "llmgate/index/vector_index.hpp"
