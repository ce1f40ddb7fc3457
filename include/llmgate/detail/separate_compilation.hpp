// LLMGATE_SEPARATE_COMPILATION: where a program defines it (in every one of
// its files, like Beast's BOOST_BEAST_SEPARATE_COMPILATION), the network
// side's heaviest function bodies, the HTTP client's coroutines, are not
// compiled in each file that uses them but once, in the one file that
// includes <llmgate/src.hpp>. Without it, llmgate is header-only as ever.
// `scripts/bench compile` measures what each way costs a user's file.
#pragma once

#ifdef LLMGATE_SEPARATE_COMPILATION
#define LLMGATE_DECL
#else
#define LLMGATE_DECL inline
#endif
