// Named presets: YAML files under <dir>/hardware/, <dir>/clusters/ and
// <dir>/models/ for each directory of a search path, first match wins.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace myriad::models::scenario {

enum class PresetKind { hardware, clusters, models };

std::string_view preset_kind_name(PresetKind kind);  // "hardware", "clusters", "models"

class PresetLibrary {
 public:
  explicit PresetLibrary(std::vector<std::filesystem::path> search_path);

  // The file of preset `name` of `kind`, or nothing.
  [[nodiscard]] std::optional<std::filesystem::path> find(PresetKind kind,
                                                          const std::string& name) const;
  // Every preset name of `kind`, sorted, without duplicates.
  [[nodiscard]] std::vector<std::string> names(PresetKind kind) const;
  [[nodiscard]] const std::vector<std::filesystem::path>& search_path() const {
    return search_path_;
  }

 private:
  std::vector<std::filesystem::path> search_path_;
};

}  // namespace myriad::models::scenario
