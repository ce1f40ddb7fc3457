// The network side's compiled part (llmgate/src.hpp), as a program built
// with LLMGATE_SEPARATE_COMPILATION compiles it: once, in one file of its
// own (scripts/bench compile times it beside openai_pipeline.cpp compiled
// the same way, whose per-file cost is what each further file pays).
#include <llmgate/src.hpp>
