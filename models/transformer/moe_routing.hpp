// Where the router sends tokens: each expert's share (uniform, Zipf or a measured
// histogram), what a capacity factor drops and pads, and what the most loaded
// expert-parallel rank computes, which sets an MoE layer's time.
#pragma once

#include <vector>

#include "models/scenario/model_spec.hpp"

namespace myriad::models {

struct MoeLoad {
  // Token-expert pairs (slots) an expert-parallel rank computes, per token each
  // rank routes: top_k under an even spread; more on the busiest rank under skew;
  // capacity_factor * top_k on every rank with a capacity (inputs padded to it).
  double busiest_slots = 0;
  double mean_slots = 0;
  double dropped = 0;              // fraction of routed slots beyond an expert's capacity
  std::vector<double> rank_slots;  // each rank's, in order
  [[nodiscard]] double imbalance() const { return mean_slots > 0 ? busiest_slots / mean_slots : 1; }
};

// Each (active) expert's share of the routed slots, summing to 1.
std::vector<double> expert_shares(const scenario::MoeSpec& moe);

// The load of `ep` ranks holding the experts in index order, experts / ep each.
// Kept per thread: the reference holds until four other loads are asked for on
// the same thread (copy it to keep it longer).
const MoeLoad& moe_load(const scenario::MoeSpec& moe, int ep);

}  // namespace myriad::models
