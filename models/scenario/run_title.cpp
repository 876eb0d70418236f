#include "models/scenario/run_title.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string_view>
#include <vector>

namespace myriad::models::scenario {

std::string grouped(long long n) {
  const std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out = n < 0 ? "-" : "";
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string run_title(const Scenario& s) {
  std::string written = s.name.empty() ? s.file : s.name;
  constexpr std::string_view kSet = "--set ";
  const auto by_override = [&](const Location& where) { return where.file.starts_with(kSet); };
  if (const auto name = s.origins.find("name");
      name != s.origins.end() && by_override(name->second)) {
    return written;
  }
  // The overrides of the keys a name describes, each once, in key order.
  std::vector<std::string> sets;
  for (const auto& [key, where] : s.origins) {
    if (!(key.starts_with("cluster.") || key.starts_with("model.")) || !by_override(where)) {
      continue;
    }
    if (std::find(sets.begin(), sets.end(), where.file) == sets.end()) sets.push_back(where.file);
  }
  if (sets.empty()) return written;
  return fmt::format("{} on {} {} (scenario \"{}\" with {})",
                     s.model.name.empty() ? std::string("the model") : s.model.name,
                     grouped(s.cluster.gpus), s.cluster.gpu.name, written, fmt::join(sets, ", "));
}

}  // namespace myriad::models::scenario
