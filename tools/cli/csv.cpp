#include "tools/cli/csv.hpp"

#include <charconv>

namespace myriad::cli {
namespace {

bool plain_number(std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc{} && ptr == end;
}

bool formula(std::string_view text) {
  return !text.empty() &&
         std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos &&
         !plain_number(text);
}

}  // namespace

std::string csv_field(std::string_view text) {
  const bool neutralised = formula(text);
  if (!neutralised && text.find_first_of(",\"\r\n") == std::string_view::npos) {
    return std::string(text);
  }
  std::string out = neutralised ? "\"'" : "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace myriad::cli
