#include "probes/collective/nccl_environment.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/text.hpp"

extern char** environ;

namespace interprobe::collective {

namespace {

constexpr std::pair<AllreduceVariant, const char*> kCliNames[] = {
    {AllreduceVariant::default_, "default"}, {AllreduceVariant::p2p_off, "p2p-off"}, {AllreduceVariant::shm_off, "shm-off"}};

}  // namespace

const char* cli_name(AllreduceVariant variant) {
  for (const auto& [v, name] : kCliNames)
    if (v == variant) return name;
  return "default";
}

std::map<std::string, std::string> variant_environment(AllreduceVariant variant) {
  switch (variant) {
    case AllreduceVariant::default_: return {};
    case AllreduceVariant::p2p_off: return {{"NCCL_P2P_DISABLE", "1"}};
    case AllreduceVariant::shm_off: return {{"NCCL_SHM_DISABLE", "1"}};
  }
  return {};
}

std::vector<AllreduceVariant> parse_variant_list(const std::string& text) {
  std::vector<AllreduceVariant> out;
  for (const auto& item : split(text, ',')) {
    std::string name = to_lower(trim(item));
    const auto* known = std::find_if(std::begin(kCliNames), std::end(kCliNames), [&](const auto& e) { return name == e.second; });
    if (known == std::end(kCliNames))
      throw InputError(fmt::format("--variant '{}': unknown; use default, p2p-off or shm-off (comma-separated)", name));
    if (std::find(out.begin(), out.end(), known->first) == out.end()) out.push_back(known->first);
  }
  if (out.empty()) throw InputError("--variant: nothing given; use default, p2p-off or shm-off");
  return out;
}

ScopedEnvironment::ScopedEnvironment(const std::map<std::string, std::string>& values) {
  for (const auto& [name, value] : values) {
    const char* old = std::getenv(name.c_str());
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    ::setenv(name.c_str(), value.c_str(), 1);
  }
}

ScopedEnvironment::~ScopedEnvironment() {
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
    if (it->second) ::setenv(it->first.c_str(), it->second->c_str(), 1);
    else ::unsetenv(it->first.c_str());
  }
}

std::map<std::string, std::string> nccl_environment_in_force() {
  std::map<std::string, std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    std::string name(entry.substr(0, eq));
    if (name.rfind("NCCL_", 0) != 0 || name.rfind("NCCL_DEBUG", 0) == 0) continue;
    out[name] = std::string(entry.substr(eq + 1));
  }
  return out;
}

NcclLogCapture& NcclLogCapture::for_this_process() {
  static NcclLogCapture capture;
  return capture;
}

NcclLogCapture::NcclLogCapture() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "interprobe-nccl-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) {
    notes_.push_back("could not create a directory for NCCL's log: transports and algorithms not recorded");
    return;
  }
  dir_ = tmpl;
  // A parent interprobe's own file (a variant measured in a child process) is not the user's.
  if (const char* user = std::getenv("NCCL_DEBUG_FILE"); user && *user && !std::strstr(user, "/interprobe-nccl-"))
    notes_.push_back(fmt::format("NCCL_DEBUG_FILE={} was replaced by a file of interprobe's to read NCCL's choices", user));
  const char* level = std::getenv("NCCL_DEBUG");
  if (!level || to_lower(level) != "trace") ::setenv("NCCL_DEBUG", "INFO", 1);
  std::string subsys = "INIT,ENV,TUNING";
  if (const char* user = std::getenv("NCCL_DEBUG_SUBSYS"); user && *user && !std::strstr(user, "INIT,ENV,TUNING")) subsys = std::string(user) + ",INIT,TUNING";
  ::setenv("NCCL_DEBUG_SUBSYS", subsys.c_str(), 1);
  ::setenv("NCCL_DEBUG_FILE", (dir_ + "/nccl.%h.%p.log").c_str(), 1);
}

NcclLogCapture::~NcclLogCapture() {
  if (dir_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string NcclLogCapture::read_new() {
  std::string text;
  if (dir_.empty()) return text;
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec))
    if (entry.is_regular_file(ec)) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    auto& offset = offsets_[file.string()];
    in.seekg(static_cast<std::streamoff>(offset));
    std::stringstream chunk;
    chunk << in.rdbuf();
    std::string piece = chunk.str();
    // Only whole lines: NCCL may be writing the last one.
    auto last_newline = piece.rfind('\n');
    if (last_newline == std::string::npos) continue;
    piece.resize(last_newline + 1);
    offset += piece.size();
    text += piece;
  }
  return text;
}

}  // namespace interprobe::collective
