// Baechi's three memory-constrained placers (Jeon et al., "Baechi: Fast Device
// Assignment of Machine Learning Graphs", SoCC 2020), as pure functions of a graph
// and a set of identical devices:
//
//   m-TOPO  walks the topological order and fills the devices in turn, each up to
//           a balanced budget (the graph's resident memory / device count).
//   m-ETF   earliest task first (Hwang et al. 1989): list scheduling that keeps
//           choosing the (ready op, device) pair that can start first, over the
//           devices with room for the op.
//   m-SCT   ETF that keeps each op's favourite child beside it (Hanen and Munier's
//           small-communication-time algorithm, 1995); the favourites come from a
//           linear relaxation (sct_lp.hpp) or, without it, a greedy rule.
//
// Every placer returns the schedule it built: one op at a time per device, an op
// starting once its device is free and every input has arrived; an input from
// another device arrives Devices::transfer_s after its producer finishes, and
// transfers overlap compute and each other (no link contention).
//
// Memory: a device holds the resident bytes of all its ops plus the largest
// scratch of any one of them (ops run one at a time, so their scratch never adds).
//
// Colocation groups (OpNode::group) stay whole: once one op of a group has a
// device, the group's other ops may go nowhere else, and the group's memory was
// charged when its first op was placed (m-TOPO: when its first op in topological
// order was met).
//
// Deterministic: the same input gives the same placement, bit for bit.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "models/place/op_graph.hpp"

namespace myriad::models::place {

struct Devices {
  int count = 1;
  double memory_bytes = std::numeric_limits<double>::infinity();   // per device
  double latency_s = 0;                                            // a, per transfer
  double bandwidth_Bps = std::numeric_limits<double>::infinity();  // b

  // Time to move a tensor between two different devices, a + bytes / b (on one
  // device a tensor costs nothing; the scheduler does not call this then).
  double transfer_s(double bytes) const { return latency_s + bytes / bandwidth_Bps; }
  // Throws std::invalid_argument unless count >= 1, memory > 0, latency >= 0 and
  // bandwidth > 0.
  void validate() const;
};

enum class Placer { m_topo, m_etf, m_sct };
const char* placer_name(Placer a);  // "m-TOPO", "m-ETF", "m-SCT"

// Above this many edges m-SCT does not solve its linear program but takes the
// greedy favourites (sct_lp.hpp), and says so in its note. GLPK's dual simplex on
// random layered graphs, one core: 0.09 s at 550 edges, 0.2 s at 984
// (BM_SctLpAtTheCap), 0.5 s at 1,150, 1.1-1.5 s at 1,800. It grows about as
// edges^2.5, so the cap keeps m-SCT's LP near 0.2 s.
inline constexpr int kSctLpMaxEdges = 1000;

struct Assignment {
  std::vector<int> device;           // per op
  std::vector<double> start_s;       // per op, in the schedule built
  double makespan_s = 0;             // last finish of that schedule
  std::vector<double> memory_bytes;  // per device: resident + largest scratch
  bool feasible = false;             // every device within Devices::memory_bytes
  std::string note;                  // how it was made, and why infeasible if so
};

// Validates both inputs (std::invalid_argument). An op that fits on no device
// still gets one (m-TOPO: the last; m-ETF and m-SCT: the one it overfills least)
// so that the schedule is whole; the placement is then infeasible, and says so.
Assignment place(const OpGraph& g, const Devices& d, Placer a);

// Schedules a given assignment (say, a uniform split) with the same list
// scheduler: among ready ops, the one that can start first on its own device,
// lower index on ties. Memory is not enforced, only reported. Throws
// std::invalid_argument unless there is one device in [0, count) per op and
// every colocation group is on one device.
// For m-ETF's own assignment this rebuilds m-ETF's schedule exactly.
Assignment evaluate(const OpGraph& g, const Devices& d, std::vector<int> device);

// The critical path: the longest chain of compute, with no transfers. No
// placement on any number of devices finishes sooner. (It is not the sum of all
// compute, which one device needs but several do not.)
double single_device_lower_bound_s(const OpGraph& g);

}  // namespace myriad::models::place
