// The program's one file that compiles llmgate's compiled part.
#include <llmgate/src.hpp>
