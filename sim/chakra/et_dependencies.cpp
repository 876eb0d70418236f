#include "sim/chakra/et_dependencies.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

namespace myriad::sim::chakra {

namespace {

// Each node's deps as indices, once the ids are resolved (compressed rows).
struct DepRows {
  std::vector<std::size_t> start;  // node i's deps are deps[start[i] .. start[i + 1])
  std::vector<std::size_t> deps;
};

DepRows resolve(const EtGraph& graph,
                const std::unordered_map<std::uint64_t, std::size_t>& index_of,
                const std::string& file, bool ctrl_deps) {
  DepRows rows;
  rows.start.reserve(graph.nodes.size() + 1);
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    rows.start.push_back(rows.deps.size());
    const EtNode& node = graph.nodes[i];
    const auto add = [&](const std::vector<std::uint64_t>& deps, const char* kind) {
      for (const std::uint64_t dep : deps) {
        const auto it = index_of.find(dep);
        if (it == index_of.end()) {
          throw EtError(node_where(file, i, node.id) + ": " + kind + " dep " + std::to_string(dep) +
                        " names no node of the file");
        }
        rows.deps.push_back(it->second);
      }
    };
    add(node.data_deps, "data");
    if (ctrl_deps) add(node.ctrl_deps, "ctrl");
  }
  rows.start.push_back(rows.deps.size());
  return rows;
}

struct Cycle {
  std::size_t first = 0;  // a node on the cycle
  std::string ids;        // "a -> b -> ... -> a"
};

// A cycle among the nodes Kahn's algorithm left (`left[i]`): from node `from`,
// follow a dep that is also left until a node repeats. Every node left has one.
Cycle find_cycle(const EtGraph& graph, const DepRows& rows, const std::vector<bool>& left,
                 std::size_t from) {
  std::vector<std::size_t> path;
  std::unordered_map<std::size_t, std::size_t> position;
  std::size_t at = from;
  while (position.find(at) == position.end()) {
    position.emplace(at, path.size());
    path.push_back(at);
    std::size_t next = at;
    for (std::size_t k = rows.start[at]; k < rows.start[at + 1]; ++k) {
      if (left[rows.deps[k]]) {
        next = rows.deps[k];
        break;
      }
    }
    at = next;
  }
  constexpr std::size_t kShown = 16;
  std::string text;
  const std::size_t first = position.at(at);
  for (std::size_t k = first; k < path.size(); ++k) {
    if (k - first == kShown) {
      text += " -> ... (" + std::to_string(path.size() - k) + " more)";
      break;
    }
    text += (k == first ? "" : " -> ") + std::to_string(graph.nodes[path[k]].id);
  }
  return {at, text + " -> " + std::to_string(graph.nodes[at].id)};
}

}  // namespace

std::string node_where(const std::string& file, std::size_t index, std::uint64_t id) {
  return file + ": node " + std::to_string(index) + " (id " + std::to_string(id) + ")";
}

void check_dependencies(const EtGraph& graph,
                        const std::unordered_map<std::uint64_t, std::size_t>& index_of,
                        const std::string& file, bool ctrl_deps) {
  const DepRows rows = resolve(graph, index_of, file, ctrl_deps);
  const std::size_t n = graph.nodes.size();
  // Kahn's algorithm: a node is released once every node it depends on is.
  std::vector<std::size_t> waiting(n);
  std::vector<std::size_t> dependents_start(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    waiting[i] = rows.start[i + 1] - rows.start[i];
    for (std::size_t k = rows.start[i]; k < rows.start[i + 1]; ++k)
      ++dependents_start[rows.deps[k] + 1];
  }
  for (std::size_t i = 0; i < n; ++i) dependents_start[i + 1] += dependents_start[i];
  std::vector<std::size_t> dependents(rows.deps.size());
  std::vector<std::size_t> fill(dependents_start.begin(), dependents_start.end() - 1);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = rows.start[i]; k < rows.start[i + 1]; ++k)
      dependents[fill[rows.deps[k]]++] = i;
  }
  std::deque<std::size_t> ready;
  for (std::size_t i = 0; i < n; ++i) {
    if (waiting[i] == 0) ready.push_back(i);
  }
  std::size_t released = 0;
  while (!ready.empty()) {
    const std::size_t u = ready.front();
    ready.pop_front();
    ++released;
    for (std::size_t k = dependents_start[u]; k < dependents_start[u + 1]; ++k) {
      if (--waiting[dependents[k]] == 0) ready.push_back(dependents[k]);
    }
  }
  if (released == n) return;
  std::vector<bool> left(n);
  std::size_t first = n;
  for (std::size_t i = 0; i < n; ++i) {
    left[i] = waiting[i] > 0;
    if (left[i] && first == n) first = i;
  }
  const Cycle cycle = find_cycle(graph, rows, left, first);
  throw EtError(node_where(file, cycle.first, graph.nodes[cycle.first].id) +
                ": dependency cycle (" + (ctrl_deps ? "data and ctrl deps" : "data deps") +
                "; each id depends on the next): " + cycle.ids);
}

}  // namespace myriad::sim::chakra
