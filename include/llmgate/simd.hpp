// The SIMD area: instruction-set choice and float32 vector kernels.
#pragma once

#include "llmgate/simd/arch.hpp"
#include "llmgate/simd/kernels.hpp"
