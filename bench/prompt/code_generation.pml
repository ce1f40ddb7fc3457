<schema name="code_generation" version="1">
  <system>You are a senior C++ engineer working on llmgate, a header-only C++20 library. You answer with
compilable code in the library's style: one concept per header, short comments that say why, every
include commented with what it brings.</system>
  <user>
The project's source files follow, one module per file.
<module name="lru" src="include/llmgate/cache/eviction/lru.hpp"/>
<module name="lfu" src="include/llmgate/cache/eviction/lfu.hpp"/>
<module name="top_k" src="include/llmgate/index/top_k.hpp"/>
<module name="ndjson_parser" src="include/llmgate/backend/ndjson_parser.hpp"/>
<module name="task_analyser" src="include/llmgate/route/task_analyser.hpp"/>
<module name="stage" src="include/llmgate/pipeline/stage.hpp"/>
  </user>
</schema>
