// An enum's names as a table of (value, name) pairs, looked up both ways: one
// table per enum is what it is spelled as, in files and on screens.
#pragma once

#include <optional>
#include <string_view>
#include <utility>

namespace myriad::models {

template <typename Enum>
using EnumName = std::pair<Enum, std::string_view>;

// The name of `value` in `table`; "?" for a value the table lacks.
template <typename Enum, typename Table>
constexpr std::string_view name_in(const Table& table, Enum value) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  return "?";
}

// The value named `name` in `table`, if any.
template <typename Enum, typename Table>
constexpr std::optional<Enum> value_in(const Table& table, std::string_view name) {
  for (const auto& [v, n] : table) {
    if (n == name) return v;
  }
  return std::nullopt;
}

}  // namespace myriad::models
