#include "models/scenario/json_file.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "models/scenario/text_file.hpp"

namespace myriad::models {

nlohmann::json read_json_file(const std::string& path, std::string_view what) {
  const std::string text = read_text_file(path, what, kMaxJsonBytes);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: not valid JSON: {}", printable(path), e.what()));
  }
}

}  // namespace myriad::models
