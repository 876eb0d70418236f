#include "models/scenario/json_file.hpp"

#include <fmt/format.h>

#include <fstream>
#include <stdexcept>

namespace myriad::models {

nlohmann::json read_json_file(const std::string& path, std::string_view what) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot open {}", path, what));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(fmt::format("{}: not valid JSON: {}", path, e.what()));
  }
}

}  // namespace myriad::models
