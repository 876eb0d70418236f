// Expert pruning as a plan axis (`plan --prune`): the variants in words, read
// from the command line, and as --set lines (declared in layout_search.hpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/planning/layout_search.hpp"

namespace myriad::sim {

std::string prune_text(const models::scenario::PruneSpec& p) {
  std::vector<std::string> parts;
  if (p.experts > 0) parts.push_back(fmt::format("experts {}", p.experts));
  if (p.pattern == models::scenario::Sparsity::two_four) parts.emplace_back("2:4");
  if (p.pattern == models::scenario::Sparsity::unstructured) {
    parts.push_back(fmt::format("unstructured {:g} %{}", 100 * p.sparsity,
                                p.sparse_kernel ? " (sparse kernel)" : ""));
  }
  return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, " + "));
}

models::scenario::PruneSpec parse_prune(const std::string& text) {
  models::scenario::PruneSpec p;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('+', start), text.size());
    const std::string part = text.substr(start, end - start);
    const std::size_t eq = part.find('=');
    const std::string name = part.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : part.substr(eq + 1);
    const auto number = [&](double lo, double hi) {
      std::size_t used = 0;
      double v = 0;
      try {
        v = std::stod(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != value.size() || !(v >= lo && v <= hi)) {
        throw std::invalid_argument(
            fmt::format("'{}': expected {}=NUMBER in [{:g}, {:g}]", part, name, lo, hi));
      }
      return v;
    };
    const bool pattern = part == "2:4" || name == "unstructured" || name == "unstructured-kernel";
    if (pattern && p.pattern != models::scenario::Sparsity::none) {
      throw std::invalid_argument(
          fmt::format("'{}': one sparsity pattern a variant ('{}' has two)", part, text));
    }
    if (part == "none") {
    } else if (part == "2:4") {
      p.pattern = models::scenario::Sparsity::two_four;
      p.sparsity = 0.5;
    } else if (name == "unstructured" || name == "unstructured-kernel") {
      p.pattern = models::scenario::Sparsity::unstructured;
      p.sparsity = number(0.01, 0.99);
      p.sparse_kernel = name == "unstructured-kernel";
    } else if (name == "experts") {
      const double n = number(1, 1 << 20);
      if (n != std::floor(n)) {
        throw std::invalid_argument(fmt::format("'{}': experts=N takes a whole number", part));
      }
      p.experts = static_cast<int>(n);
    } else {
      throw std::invalid_argument(fmt::format(
          "'{}': expected none, 2:4, unstructured=F, unstructured-kernel=F or experts=N, "
          "joined by '+'",
          part));
    }
    start = end + 1;
  }
  return p;
}

std::vector<models::scenario::PruneSpec> parse_prune_axis(const models::scenario::Scenario& s,
                                                          const std::string& values) {
  if (values.empty()) return {};
  if (!s.model.is_moe()) throw std::invalid_argument("the model has no experts to prune");
  const models::scenario::MoeSpec& moe = s.model.moe;
  std::vector<models::scenario::PruneSpec> variants;
  for (const auto& v : parse_axis("model.moe.prune=" + values).values) {
    const models::scenario::PruneSpec p = parse_prune(v);
    const int left = moe.experts - p.experts;
    if (left < moe.top_k) {
      throw std::invalid_argument(fmt::format(
          "'{}' prunes {} of the model's {} experts and leaves {}: {}", v, p.experts, moe.experts,
          std::max(left, 0),
          left < 1 ? std::string("none to route a token to")
                   : fmt::format("fewer than the {} each token is routed to (top_k)", moe.top_k)));
    }
    variants.push_back(p);
  }
  return variants;
}

std::vector<std::string> prune_overrides(const models::scenario::PruneSpec& p) {
  std::vector<std::string> out = {fmt::format("model.moe.prune.experts={}", p.experts)};
  switch (p.pattern) {
    case models::scenario::Sparsity::none:
      out.emplace_back("model.moe.prune.pattern=none");
      break;
    case models::scenario::Sparsity::two_four:
      out.emplace_back("model.moe.prune.pattern=2:4");
      break;
    case models::scenario::Sparsity::unstructured:
      out.emplace_back("model.moe.prune.pattern=unstructured");
      out.push_back(fmt::format("model.moe.prune.sparse_kernel={}", p.sparse_kernel));
      break;
  }
  out.push_back(fmt::format("model.moe.prune.sparsity={}", p.sparsity));
  return out;
}

}  // namespace myriad::sim
