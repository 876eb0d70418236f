#include "models/scenario/preset_library.hpp"

#include <algorithm>
#include <system_error>

namespace myriad::models::scenario {

std::string_view preset_kind_name(PresetKind kind) {
  switch (kind) {
    case PresetKind::hardware:
      return "hardware";
    case PresetKind::clusters:
      return "clusters";
    case PresetKind::models:
      return "models";
  }
  return "";
}

PresetLibrary::PresetLibrary(std::vector<std::filesystem::path> search_path)
    : search_path_(std::move(search_path)) {}

std::optional<std::filesystem::path> PresetLibrary::find(PresetKind kind,
                                                         const std::string& name) const {
  // A name is a file stem, never a path: "../x" must not escape the preset folders.
  if (name.empty() || name.find('/') != std::string::npos || name.find('\\') != std::string::npos ||
      name.front() == '.') {
    return std::nullopt;
  }
  for (const auto& dir : search_path_) {
    const auto candidate = dir / preset_kind_name(kind) / (name + ".yaml");
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
  }
  return std::nullopt;
}

std::vector<std::string> PresetLibrary::names(PresetKind kind) const {
  std::vector<std::string> out;
  for (const auto& dir : search_path_) {
    std::error_code ec;
    const auto folder = dir / preset_kind_name(kind);
    if (!std::filesystem::is_directory(folder, ec)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
      if (entry.path().extension() == ".yaml") out.push_back(entry.path().stem().string());
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace myriad::models::scenario
