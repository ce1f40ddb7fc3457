"""Writes every C++ snippet of README.md and docs/*.md as a program of its
own, and a CMake project that builds them against an installed llmgate
(package.docs_snippets, docs_snippets.cmake, builds and runs it).

A snippet is a ```cpp block. Its #include lines open the program; the rest
is the body of main(). An HTML comment right above the block may give what
the snippet leaves to the reader (the vectors, the question, a model's
answer), as C++ put before the body, and say that the program runs:

    <!-- snippet runs
    std::vector<float> embedding(384, 0.5f);
    -->
    ```cpp
    ...
    ```

Without "runs" a snippet is compiled only (it needs a model server or a
file the reader has). Usage: docs_snippets.py <checkout> <out folder>."""
import pathlib
import re
import sys

BLOCK = re.compile(r"(?:<!-- snippet(?P<runs> runs)?\n(?P<context>.*?)-->\n)?```cpp\n(?P<code>.*?)```", re.S)


def program(source, line, context, code):
    includes, body = [], []
    for text in (context + code).splitlines():
        (includes if text.startswith("#include") else body).append(text)
    while body and not body[0].strip():
        body.pop(0)
    indented = "\n".join(("  " + text) if text else "" for text in body)
    return (f"// {source}, the snippet at line {line}, as docs_snippets.py wrote it.\n"
            + "\n".join(includes) + "\n\nint main() {\n" + indented + "\n}\n")


def main(checkout, out):
    checkout, out = pathlib.Path(checkout), pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    documents = [checkout / "README.md"] + sorted((checkout / "docs").glob("*.md"))
    targets = []
    for document in documents:
        text = document.read_text()
        source = document.relative_to(checkout).as_posix()
        for number, block in enumerate(BLOCK.finditer(text), 1):
            line = text.count("\n", 0, block.start("code"))
            name = re.sub(r"[^A-Za-z0-9]+", "_", document.stem) + f"_{number}"
            (out / f"{name}.cpp").write_text(program(source, line, block["context"] or "", block["code"]))
            targets.append((name, bool(block["runs"])))
    if not targets:
        sys.exit("docs_snippets.py: no ```cpp block in README.md or docs/")
    lines = ["cmake_minimum_required(VERSION 3.21)",
             "project(llmgate_docs_snippets LANGUAGES CXX)",
             "find_package(llmgate CONFIG REQUIRED COMPONENTS server)",
             "enable_testing()"]
    for name, runs in targets:
        lines.append(f"add_executable({name} {name}.cpp)")
        lines.append(f"target_link_libraries({name} PRIVATE llmgate::llmgate)")
        # What a compiler says by default is an error here: GCC warns where Clang refuses.
        lines.append(f'target_compile_options({name} PRIVATE $<$<CXX_COMPILER_ID:GNU,Clang>:-Werror>)')
        if runs:
            lines.append(f"add_test(NAME {name} COMMAND {name})")
    # CTest fails a project with no tests: one that says how many compiled.
    lines.append(f'add_test(NAME compiled COMMAND "${{CMAKE_COMMAND}}" -E echo "{len(targets)} snippets compiled")')
    (out / "CMakeLists.txt").write_text("\n".join(lines) + "\n")
    print(f"docs_snippets.py: {len(targets)} snippets, {sum(runs for _, runs in targets)} run")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
