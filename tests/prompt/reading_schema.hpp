// The schema most PML suites use: a librarian's prompt with a parameter, a
// union with a scaffold, a nested union, an uncached module and three role
// blocks, and the same schema made with schema_builder.
#pragma once

#include <string>  // std::string

#include "llmgate/prompt/builder.hpp"  // schema_builder
#include "llmgate/prompt/schema.hpp"   // prompt_schema

namespace llmgate::test {

inline const std::string reading_schema_pml = R"(<schema name="reading" version="1">
  <system>
    You are a patient librarian who suggests books.
  </system>
  <user>
    <module name="plan">
      I want a reading plan for <param name="weeks" len="3"/> weeks.
      <union scaffold="fiction">
        <module name="fiction">
          Stories please, the longer the better.
        </module>
        <module name="history">
          Only history books.
          <union>
            <module name="ancient">Greece and Rome.</module>
            <module name="modern">The last two centuries.</module>
          </union>
        </module>
      </union>
    </module>
    <module name="notes" cache="false">
      Today is a holiday.
    </module>
  </user>
  <assistant>
    Tell me more about what you like.
  </assistant>
</schema>)";

inline prompt_schema reading_schema_built() {
  return schema_builder("reading", "1")
      .system("You are a patient librarian who suggests books.")
      .user()
      .module("plan")
      .text("I want a reading plan for ")
      .param("weeks", 3)
      .text(" weeks.")
      .union_("fiction")
      .module("fiction").text("Stories please, the longer the better.").end()
      .module("history").text("Only history books.")
      .union_().module("ancient").text("Greece and Rome.").end().module("modern").text("The last two centuries.").end().end()
      .end()
      .end()
      .end()
      .module("notes", false).text("Today is a holiday.").end()
      .end()
      .assistant("Tell me more about what you like.")
      .build();
}

}  // namespace llmgate::test
