// The operator graph that Baechi places (Jeon et al., "Baechi: Fast Device
// Assignment of Machine Learning Graphs", SoCC 2020): ops that take compute time
// and hold memory, and edges that carry a tensor from one op to another. A plain
// value: the placers read it and never change it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace myriad::models::place {

struct OpNode {
  std::string name;         // for messages; may be empty (the op is then called #index)
  double compute_s = 0;     // time to run the op on one device
  double memory_bytes = 0;  // resident on its device for the whole step: parameters,
                            // gradients, optimizer state, activations kept for backward
  double temp_bytes = 0;    // scratch held only while the op runs
  // Colocation group (Baechi's co-placement; TensorFlow's colocation constraints):
  // ops of one group go on one device, the one its first placed op took, and the
  // group's resident bytes (the sum over its ops) are charged to that device at
  // once. -1: no group. A pipeline's graph unrolled over micro-batches keeps each
  // layer's copies in one group, so that a layer's weights sit on one stage.
  int group = -1;
};

struct OpEdge {
  int from = 0;      // index of the producing op in OpGraph::nodes
  int to = 0;        // index of the consuming op
  double bytes = 0;  // the tensor sent when the two ops sit on different devices
};

struct OpGraph {
  std::vector<OpNode> nodes;
  std::vector<OpEdge> edges;

  // Throws std::invalid_argument naming the first fault it finds: an edge with an
  // end out of range, a negative or non-finite cost, a group below -1, or a cycle
  // (listed op by op).
  void validate() const;
  // Kahn's order taking the smallest ready index first, so that one graph always
  // gives one order. Throws as validate() does for a bad edge or a cycle.
  std::vector<int> topo_order() const;
  // 1 + the largest group id (0 when no op has a group).
  [[nodiscard]] int groups() const;
};

// Each op's edges, as indices into OpGraph::edges in increasing order. Assumes the
// edges are in range (validate first).
struct Adjacency {
  std::vector<std::vector<int>> in;   // in[v]: the edges into v
  std::vector<std::vector<int>> out;  // out[v]: the edges out of v
};
Adjacency adjacency(const OpGraph& g);

// A synthetic layered graph for tests and benchmarks: `width` ops a layer, each op
// past the first layer reading 1 to max_parents distinct ops of the layer before.
// Costs are drawn uniformly: compute 0.1-1 ms, resident memory 1-10 MB, scratch
// 0-1 MB, tensors 0.1-10 MB, so that at 10 GB/s a transfer costs about an op.
// The draws use std::mt19937_64's raw output only (no std distributions, whose
// algorithms differ between standard libraries): one seed, one graph, everywhere.
struct LayeredGraphSpec {
  int nodes = 10000;
  int width = 100;
  int max_parents = 3;
  std::uint64_t seed = 2020;
};
OpGraph random_layered_graph(const LayeredGraphSpec& spec);

}  // namespace myriad::models::place
