// A page as Debian's Chromium, headless, leaves it after running its
// scripts, for the dashboard's tests. Where Chromium is not installed the
// caller is told so (scripts/setup chromium installs it).
#pragma once

#include <cstdio>      // popen, pclose, std::fread
#include <filesystem>  // std::filesystem::exists
#include <optional>    // std::optional
#include <string>      // std::string

#include "../temporary_directory.hpp"

namespace llmgate::test {

/// The DOM of the page at `url` after five seconds of its (virtual) time;
/// nothing when no Chromium is installed.
inline std::optional<std::string> rendered_dom(const std::string& url) {
  const char* browser = nullptr;
  for (const char* candidate : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (std::filesystem::exists(candidate)) browser = candidate;
  if (!browser) return std::nullopt;
  temporary_directory profile;
  const std::string command = std::string(browser) +
      " --headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run"
      " --disable-component-update --disable-sync --user-data-dir=" + profile.path().string() +
      " --virtual-time-budget=5000 --dump-dom '" + url + "' 2>/dev/null";
  std::string dom;
  if (std::FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) dom.append(buffer, n);
    pclose(pipe);
  }
  return dom;
}

/// Whether `dom` shows `figure` as the text of the element with id `id`.
inline bool shows(const std::string& dom, const std::string& id, const std::string& figure) {
  return dom.find("id=\"" + id + "\">" + figure + "<") != std::string::npos;
}

}  // namespace llmgate::test
