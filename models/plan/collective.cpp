#include "models/plan/collective.hpp"

#include <fmt/format.h>

#include <array>
#include <stdexcept>

#include "models/names/enum_names.hpp"

namespace myriad::models {
namespace {

struct KindNames {
  CollectiveKind kind;
  std::string_view name;
  std::string_view key;
};

constexpr std::array<KindNames, 6> kKinds{{
    {CollectiveKind::all_reduce, "all-reduce", "all_reduce"},
    {CollectiveKind::all_gather, "all-gather", "all_gather"},
    {CollectiveKind::reduce_scatter, "reduce-scatter", "reduce_scatter"},
    {CollectiveKind::all_to_all, "all-to-all", "all_to_all"},
    {CollectiveKind::broadcast, "broadcast", "broadcast"},
    {CollectiveKind::send_recv, "send/recv", "send_recv"},
}};

constexpr std::array<EnumName<CollectiveAlgorithm>, 10> kAlgorithms{{
    {CollectiveAlgorithm::none, "none"},
    {CollectiveAlgorithm::ring, "ring"},
    {CollectiveAlgorithm::nvls, "nvls"},
    {CollectiveAlgorithm::tree, "tree"},
    {CollectiveAlgorithm::hierarchical, "hierarchical"},
    {CollectiveAlgorithm::pairwise, "pairwise"},
    {CollectiveAlgorithm::two_hop, "two-hop"},
    {CollectiveAlgorithm::chain, "chain"},
    {CollectiveAlgorithm::p2p, "p2p"},
    {CollectiveAlgorithm::sharp, "sharp"},
}};

}  // namespace

std::string_view collective_name(CollectiveKind k) {
  for (const auto& n : kKinds) {
    if (n.kind == k) return n.name;
  }
  return "?";
}

std::string_view collective_key(CollectiveKind k) {
  for (const auto& n : kKinds) {
    if (n.kind == k) return n.key;
  }
  return "?";
}

std::optional<CollectiveKind> collective_from_key(std::string_view key) {
  for (const auto& n : kKinds) {
    if (n.key == key) return n.kind;
  }
  return std::nullopt;
}

std::string_view algorithm_name(CollectiveAlgorithm a) { return name_in(kAlgorithms, a); }

std::optional<CollectiveAlgorithm> algorithm_from_name(std::string_view name) {
  return value_in<CollectiveAlgorithm>(kAlgorithms, name);
}

std::string_view group_name(GroupKind g) {
  switch (g) {
    case GroupKind::tp:
      return "tp";
    case GroupKind::cp:
      return "cp";
    case GroupKind::ep:
      return "ep";
    case GroupKind::dp:
      return "dp";
    case GroupKind::pp:
      return "pp";
  }
  return "?";
}

double busbw_factor(CollectiveKind k, double n) {
  if (!(n >= 1)) {
    throw std::invalid_argument(fmt::format("busbw_factor: ranks must be at least 1, got {}", n));
  }
  switch (k) {
    case CollectiveKind::all_reduce:
      return 2 * (n - 1) / n;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_to_all:
      return (n - 1) / n;
    case CollectiveKind::broadcast:
    case CollectiveKind::send_recv:
      return 1;
  }
  return 1;
}

double ring_steps(CollectiveKind k, double n) {
  return k == CollectiveKind::all_reduce ? 2 * (n - 1) : n - 1;
}

}  // namespace myriad::models
