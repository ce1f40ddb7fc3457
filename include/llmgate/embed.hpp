// The embed area: Unicode text handling, normalisation, tokens, the
// Embedder concept, the hashing embedder and the external embedder.
#pragma once

#include "llmgate/embed/embedder.hpp"
#include "llmgate/embed/external_embedder.hpp"
#include "llmgate/embed/hashing_embedder.hpp"
#include "llmgate/embed/stemmer.hpp"
#include "llmgate/embed/text.hpp"
#include "llmgate/embed/tokenizer.hpp"
#include "llmgate/embed/unicode.hpp"
