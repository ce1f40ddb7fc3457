// The lexical guard: each reason to veto, and paraphrases it lets through.
#include <boost/test/unit_test.hpp>

#include "llmgate/cache/guard.hpp"

using llmgate::lexical_guard;
using llmgate::veto_reason;

BOOST_AUTO_TEST_SUITE(guard_test)

BOOST_AUTO_TEST_CASE(paraphrases_pass) {
  const lexical_guard guard;
  BOOST_TEST((guard.vetoes("How do I reset my password?", "how can i reset my PASSWORD") == veto_reason::none));
  BOOST_TEST((guard.vetoes("Minutes in 2 hours?", "How many minutes are there in 2 hours") == veto_reason::none));
  BOOST_TEST((guard.vetoes("Is Rust better than Go?", "Is Rust better than Go for servers?") == veto_reason::none));
  BOOST_TEST((guard.vetoes("I can't log in", "I cannot sign in") == veto_reason::none));  // one negation each
}

BOOST_AUTO_TEST_CASE(other_numbers_are_vetoed) {
  const lexical_guard guard;
  BOOST_TEST((guard.vetoes("How many minutes are in 2 hours?", "How many minutes are in 3 hours?") ==
              veto_reason::numbers_differ));
  BOOST_TEST((guard.vetoes("What is 12 times 4?", "What is 12 times 4 plus 1?") == veto_reason::numbers_differ));
  BOOST_TEST((guard.vetoes("Wie viel sind ٣ Stunden?", "Wie viel sind 3 Stunden?") != veto_reason::none));
}

BOOST_AUTO_TEST_CASE(a_negation_in_one_only_is_vetoed) {
  const lexical_guard guard;
  BOOST_TEST((guard.vetoes("Should I take ibuprofen with food?", "Should I not take ibuprofen with food?") ==
              veto_reason::negation_differs));
  BOOST_TEST((guard.vetoes("Kann ich das essen?", "Kann ich das nicht essen?") == veto_reason::negation_differs));
}

BOOST_AUTO_TEST_CASE(swapped_order_is_vetoed) {
  const lexical_guard guard;
  BOOST_TEST((guard.vetoes("Is Java faster than Python?", "Is Python faster than Java?") ==
              veto_reason::order_swapped));
  BOOST_TEST((guard.vetoes("Flights from Paris to London", "Flights from London to Paris") ==
              veto_reason::order_swapped));
  BOOST_TEST((guard.vetoes("Translate from English into French", "Translate from French into English") ==
              veto_reason::order_swapped));
  BOOST_TEST((guard.vetoes("Convert 5 km in 3 minutes to speed", "Convert 3 km in 5 minutes to speed") ==
              veto_reason::order_swapped));
  // The same words in another order without such a word are a paraphrase.
  BOOST_TEST((guard.vetoes("python install pip how", "how install pip python") == veto_reason::none));
}

BOOST_AUTO_TEST_SUITE_END()
