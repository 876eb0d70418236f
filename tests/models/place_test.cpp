// Baechi's placers (models/place) against what can be worked out by hand or by
// brute force, and every schedule they return checked against the machine's rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/place/op_graph.hpp"
#include "models/place/placer.hpp"
#include "models/place/sct_lp.hpp"

namespace myriad::models::place {
namespace {

constexpr Placer kAll[] = {Placer::m_topo, Placer::m_etf, Placer::m_sct};

std::string thrown_by(const OpGraph& g) {
  try {
    g.validate();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

// Ops named n0, n1, ... with unit memory.
OpGraph ops(const std::vector<double>& compute) {
  OpGraph g;
  for (std::size_t v = 0; v < compute.size(); ++v) {
    g.nodes.push_back({"n" + std::to_string(v), compute[v], 1, 0});
  }
  return g;
}

OpGraph chain(const std::vector<double>& compute, double bytes) {
  OpGraph g = ops(compute);
  for (int v = 1; v < static_cast<int>(compute.size()); ++v) g.edges.push_back({v - 1, v, bytes});
  return g;
}

// What any schedule must respect: an op starts after each parent has finished
// and, from another device, after the tensor's transfer; a device runs one op at
// a time; the makespan, memory and feasibility are those of the schedule.
void expect_valid(const OpGraph& g, const Devices& d, const Assignment& p) {
  const std::size_t n = g.nodes.size();
  ASSERT_EQ(p.device.size(), n);
  ASSERT_EQ(p.start_s.size(), n);
  ASSERT_EQ(p.memory_bytes.size(), static_cast<std::size_t>(d.count));
  const double slack = 1e-12 * std::max(1.0, p.makespan_s);
  const auto finish = [&](int v) { return p.start_s[v] + g.nodes[v].compute_s; };
  for (const OpEdge& e : g.edges) {
    const double sent = p.device[e.from] == p.device[e.to] ? 0 : d.transfer_s(e.bytes);
    EXPECT_GE(p.start_s[e.to] + slack, finish(e.from) + sent) << e.from << " -> " << e.to;
  }
  std::vector<std::vector<int>> on(d.count);
  double makespan = 0;
  for (int v = 0; v < static_cast<int>(n); ++v) {
    ASSERT_GE(p.device[v], 0);
    ASSERT_LT(p.device[v], d.count);
    on[p.device[v]].push_back(v);
    makespan = std::max(makespan, finish(v));
  }
  EXPECT_DOUBLE_EQ(p.makespan_s, makespan);
  bool feasible = true;
  for (int dev = 0; dev < d.count; ++dev) {
    std::sort(on[dev].begin(), on[dev].end(),
              [&](int a, int b) { return p.start_s[a] < p.start_s[b]; });
    double resident = 0, scratch = 0;
    for (std::size_t k = 0; k < on[dev].size(); ++k) {
      const OpNode& op = g.nodes[on[dev][k]];
      if (k > 0) {
        EXPECT_GE(p.start_s[on[dev][k]] + slack, finish(on[dev][k - 1])) << "device " << dev;
      }
      resident += op.memory_bytes;
      scratch = std::max(scratch, op.temp_bytes);
    }
    EXPECT_DOUBLE_EQ(p.memory_bytes[dev], resident + scratch) << "device " << dev;
    feasible = feasible && resident + scratch <= d.memory_bytes;
  }
  EXPECT_EQ(p.feasible, feasible) << p.note;
}

TEST(OpGraph, TopoOrderTakesTheSmallestReadyIndexFirst) {
  OpGraph g = ops({1, 1, 1, 1, 1});
  g.edges = {{3, 1, 0}, {4, 0, 0}, {2, 0, 0}};
  // Ready at first: 2, 3, 4. Taking 2 leaves 0 waiting on 4; 3 frees 1; then 1, 4, 0.
  EXPECT_EQ(g.topo_order(), (std::vector<int>{2, 3, 1, 4, 0}));
}

TEST(OpGraph, ValidateNamesTheEdgeOutOfRange) {
  OpGraph g = chain({1, 1, 1}, 0);
  g.edges.push_back({0, 7, 0});
  EXPECT_NE(thrown_by(g).find("edge 2 (0 -> 7)"), std::string::npos) << thrown_by(g);
  g.edges.back() = {-1, 2, 0};
  EXPECT_NE(thrown_by(g).find("edge 2 (-1 -> 2)"), std::string::npos) << thrown_by(g);
  EXPECT_THROW((void)g.topo_order(), std::invalid_argument);
}

TEST(OpGraph, ValidateNamesTheOpsOfACycle) {
  OpGraph g;
  for (const char* name : {"x", "a", "b", "c"}) g.nodes.push_back({name, 1, 1, 0});
  g.edges = {{0, 1, 0}, {1, 2, 0}, {2, 3, 0}, {3, 1, 0}};
  EXPECT_NE(thrown_by(g).find("cycle 'b' -> 'c' -> 'a' -> 'b'"), std::string::npos) << thrown_by(g);
  EXPECT_THROW((void)g.topo_order(), std::invalid_argument);
  g.edges = {{0, 0, 0}};
  EXPECT_NE(thrown_by(g).find("cycle 'x' -> 'x'"), std::string::npos) << thrown_by(g);
}

TEST(OpGraph, ValidateNamesTheBadCost) {
  OpGraph g = chain({1, -2}, 0);
  EXPECT_NE(thrown_by(g).find("op 'n1' has compute_s = -2"), std::string::npos) << thrown_by(g);
  g = chain({1, 2}, -5);
  EXPECT_NE(thrown_by(g).find("edge 0 ('n0' -> 'n1') has bytes = -5"), std::string::npos)
      << thrown_by(g);
}

TEST(Place, RejectsBadDevicesAndAssignments) {
  const OpGraph g = chain({1, 1}, 0);
  EXPECT_THROW((void)place(g, {0, 1, 0, 1}, Placer::m_etf), std::invalid_argument);
  EXPECT_THROW((void)place(g, {2, 1, 0, 0}, Placer::m_etf), std::invalid_argument);
  EXPECT_THROW((void)evaluate(g, {2, 1, 0, 1}, {0}), std::invalid_argument);
  EXPECT_THROW((void)evaluate(g, {2, 1, 0, 1}, {0, 2}), std::invalid_argument);
}

// Expectation: 4 ops of 1, 2, 3, 4 s in a chain, on 2 devices where a transfer
// takes 1,000 s. m-ETF and m-SCT keep the chain on device 0: makespan 10 s, the
// sum of compute. m-TOPO splits the memory evenly, 2 ops a device, and pays one
// transfer: 1,010 s.
TEST(Place, ChainStaysOnOneDeviceWhenTransfersAreDear) {
  const OpGraph g = chain({1, 2, 3, 4}, 0);
  const Devices d{2, 10, 1000, 1};
  for (Placer a : {Placer::m_etf, Placer::m_sct}) {
    const Assignment p = place(g, d, a);
    expect_valid(g, d, p);
    EXPECT_EQ(p.device, (std::vector<int>{0, 0, 0, 0})) << placer_name(a);
    EXPECT_DOUBLE_EQ(p.makespan_s, 10) << placer_name(a);
    EXPECT_TRUE(p.feasible);
  }
  const Assignment topo = place(g, d, Placer::m_topo);
  expect_valid(g, d, topo);
  EXPECT_EQ(topo.device, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_DOUBLE_EQ(topo.makespan_s, 1010);
  EXPECT_DOUBLE_EQ(single_device_lower_bound_s(g), 10);
}

// Expectation: a chain holding 2, 2, 1, 1, 1, 1 bytes on 2 devices of 4.5 bytes
// (8 in all) cannot sit on one device. Every placer splits it within memory; the
// uniform split, 3 ops a device, puts 5 bytes on device 0 and is infeasible.
TEST(Place, MemoryForcesASplit) {
  OpGraph g = chain({1, 1, 1, 1, 1, 1}, 0);
  for (int v : {0, 1}) g.nodes[v].memory_bytes = 2;
  const Devices d{2, 4.5, 1000, 1};
  for (Placer a : kAll) {
    const Assignment p = place(g, d, a);
    expect_valid(g, d, p);
    EXPECT_TRUE(p.feasible) << placer_name(a) << ": " << p.note;
    EXPECT_NE(p.device[0], p.device[5]) << placer_name(a);
  }
  const Assignment uniform = evaluate(g, d, {0, 0, 0, 1, 1, 1});
  expect_valid(g, d, uniform);
  EXPECT_FALSE(uniform.feasible);
  EXPECT_DOUBLE_EQ(uniform.memory_bytes[0], 5);
  EXPECT_NE(uniform.note.find("infeasible: device 0 needs 5 bytes > 4.5 bytes"), std::string::npos)
      << uniform.note;
}

// Expectation: resident bytes add up, scratch does not (ops run one at a time):
// 1 + 1 + 1 resident and scratch 4, 2, 0 peak at 3 + 4 = 7 bytes on one device.
TEST(Place, ScratchCountsOnceADevice) {
  OpGraph g = chain({1, 1, 1}, 0);
  g.nodes[0].temp_bytes = 4;
  g.nodes[1].temp_bytes = 2;
  const Assignment p = evaluate(g, {2, 7, 0, 1}, {0, 0, 0});
  EXPECT_DOUBLE_EQ(p.memory_bytes[0], 7);
  EXPECT_DOUBLE_EQ(p.memory_bytes[1], 0);
  EXPECT_TRUE(p.feasible);
  // m-ETF counts it the same way: with 6.5 bytes the third op no longer fits beside the others.
  const Assignment etf = place(g, {2, 6.5, 0, 1}, Placer::m_etf);
  expect_valid(g, {2, 6.5, 0, 1}, etf);
  EXPECT_EQ(etf.device, (std::vector<int>{0, 0, 1}));
}

// Expectation: an op larger than any device still gets a device, so the schedule
// is whole, and every placer says the placement is infeasible.
TEST(Place, AnOpTooLargeForAnyDeviceMakesItInfeasible) {
  OpGraph g = chain({1, 1, 1}, 0);
  g.nodes[1].memory_bytes = 100;
  const Devices d{2, 10, 0, 1};
  for (Placer a : kAll) {
    const Assignment p = place(g, d, a);
    expect_valid(g, d, p);
    EXPECT_FALSE(p.feasible) << placer_name(a);
    EXPECT_NE(p.note.find("infeasible"), std::string::npos) << p.note;
  }
}

// Two fork-joins in series, source -> 4 branches -> join -> 4 branches -> sink,
// ops of 1 s but for one 4 s branch a stage, every tensor the same size. On 2
// devices the list scheduler is optimal for a given assignment: a device runs its
// branches back to back from the moment their common input is there, the join
// waits for the last of them (in any order, as every branch's result costs the
// same transfer), and each stage starts from its join's finish. So the best of
// all 2^11 assignments is the optimum over every schedule, and no placer's
// makespan can be below it.
OpGraph fork_join(double bytes) {
  OpGraph g = ops({1, 1, 1, 1, 4, 1, 4, 1, 1, 1, 1});
  for (int branch = 1; branch <= 4; ++branch) {
    g.edges.push_back({0, branch, bytes});
    g.edges.push_back({branch, 5, bytes});
    g.edges.push_back({5, 5 + branch, bytes});
    g.edges.push_back({5 + branch, 10, bytes});
  }
  return g;
}

double brute_force_makespan(const OpGraph& g, const Devices& d) {
  const int n = static_cast<int>(g.nodes.size());
  double best = 1e300;
  for (int mask = 0; mask < (1 << (n - 1)); ++mask) {  // op 0 on device 0: the devices are alike
    std::vector<int> device(n, 0);
    for (int v = 1; v < n; ++v) device[v] = (mask >> (v - 1)) & 1;
    best = std::min(best, evaluate(g, d, device).makespan_s);
  }
  return best;
}

// Expectation (Baechi's ranking when communication is heavy: m-SCT no worse
// than m-ETF, both ahead of m-TOPO, which ignores communication): with each
// transfer (1.5 s) as dear as an average op (1.45 s), m-SCT <= m-ETF <= m-TOPO,
// none below the brute-force optimum (13 s), m-SCT within 1.2 of it. Measured:
// m-TOPO 18.5 s, m-ETF 14.5 s, m-SCT 14 s with the LP's favourites (the long
// branches beside their parents) and 14.5 s with the greedy ones. Not a theorem:
// on other fork-joins of this kind m-SCT with the LP came out up to 11% above
// m-ETF (the LP assumes as many processors as needed; here there are 2).
TEST(Place, CommunicationHeavyForkJoinAgainstBruteForce) {
  const OpGraph g = fork_join(1.5);
  const Devices d{2, 100, 0, 1};
  const double optimum = brute_force_makespan(g, d);
  EXPECT_DOUBLE_EQ(optimum, 13);
  double makespan[3];
  for (Placer a : kAll) {
    const Assignment p = place(g, d, a);
    expect_valid(g, d, p);
    makespan[static_cast<int>(a)] = p.makespan_s;
    std::cout << placer_name(a) << ": actual " << p.makespan_s << " s, optimum " << optimum
              << " s; " << p.note << "\n";
  }
  const double topo = makespan[0], etf = makespan[1], sct = makespan[2];
  EXPECT_LE(sct, etf);
  EXPECT_LE(etf, topo);
  EXPECT_GE(sct, optimum);
  EXPECT_LE(sct, 1.2 * optimum);
  const Assignment p = place(g, d, Placer::m_sct);
  const std::string lp = sct_lp_available() ? "LP solved by GLPK" : "GLPK absent";
  EXPECT_NE(p.note.find(lp), std::string::npos) << p.note;
}

// Expectation, worked by hand: r (1 s) feeds k (3 s, a 0.5 s transfer) and j
// (3 s, a 10 s transfer). Both children can start on r's device at 1 s. m-ETF
// settles the tie by index: k takes device 0, and j waits for it there (4-7 s),
// a transfer to device 1 being dearer. j is r's favourite child (its edge is the
// largest, and the LP makes it so too), so m-SCT runs j beside r at 1-4 s and
// sends k to device 1 at 1.5-4.5 s: 4.5 s against 7 s.
TEST(Place, FavouriteChildStaysBesideItsParent) {
  OpGraph g = ops({1, 3, 3});
  g.edges = {{0, 1, 0.5}, {0, 2, 10}};
  const Devices d{2, 100, 0, 1};
  const Assignment etf = place(g, d, Placer::m_etf);
  const Assignment sct = place(g, d, Placer::m_sct);
  expect_valid(g, d, etf);
  expect_valid(g, d, sct);
  EXPECT_DOUBLE_EQ(etf.makespan_s, 7);
  EXPECT_DOUBLE_EQ(sct.makespan_s, 4.5);
  EXPECT_EQ(sct.device, (std::vector<int>{0, 1, 0}));
  const std::string lp = sct_lp_available() ? "LP solved by GLPK" : "GLPK absent";
  EXPECT_NE(sct.note.find(lp), std::string::npos) << sct.note;
  EXPECT_NE(sct.note.find("1 of 1 favourite children beside their parent"), std::string::npos)
      << sct.note;
}

// Expectation: on a random layered graph of 1,000 ops whose tensors take about
// ten ops' time to send (1 GB/s), m-SCT stays within 5% of m-ETF. Its rule 3
// (never idle the parent's device for a favourite child) is what keeps it there:
// without it, m-SCT came out 75% above m-ETF on this graph.
TEST(Place, FavouritesDoNotIdleTheirParentsDevice) {
  const OpGraph g = random_layered_graph({1000, 100, 3, 7});
  const Devices d{8, 1e12, 1e-5, 1e9};
  const Assignment etf = place(g, d, Placer::m_etf);
  const Assignment sct = place(g, d, Placer::m_sct);
  expect_valid(g, d, sct);
  std::cout << "m-ETF " << etf.makespan_s << " s, m-SCT " << sct.makespan_s << " s\n";
  EXPECT_LE(sct.makespan_s, 1.05 * etf.makespan_s);
}

// Every op has at most one favourite child, every child at most one favourite
// parent, and a favourite is a real child.
void expect_matching(const OpGraph& g, const FavouriteChildren& f) {
  ASSERT_EQ(f.child.size(), g.nodes.size());
  std::vector<int> parents(g.nodes.size(), 0);
  for (int v = 0; v < static_cast<int>(g.nodes.size()); ++v) {
    if (f.child[v] < 0) continue;
    ++parents[f.child[v]];
    EXPECT_TRUE(std::any_of(g.edges.begin(), g.edges.end(), [&](const OpEdge& e) {
      return e.from == v && e.to == f.child[v];
    })) << v;
  }
  EXPECT_LE(*std::max_element(parents.begin(), parents.end()), 1);
}

TEST(SctLp, GreedyFavouritesPairOpsOneToOne) {
  const OpGraph g = random_layered_graph({300, 30, 3, 11});
  expect_matching(g, largest_edge_favourite_children(g));
}

TEST(SctLp, LpFavouritesPairOpsOneToOne) {
  const OpGraph g = random_layered_graph({300, 30, 3, 11});
  const auto lp = sct_favourite_children(g, {4, 1e12, 1e-5, 1e10});
  ASSERT_EQ(lp.has_value(), sct_lp_available());
  if (!lp) GTEST_SKIP() << "built without GLPK: sct_favourite_children returns std::nullopt";
  expect_matching(g, *lp);
  EXPECT_EQ(lp->variables, static_cast<int>(g.edges.size() + g.nodes.size()) + 1);
}

// Expectation: the greedy rule takes edges in decreasing bytes: 0 -> 2 (9) first,
// so 1, whose largest edge also goes to 2, settles for 3.
TEST(SctLp, GreedyFavouriteIsTheLargestUnclaimedEdge) {
  OpGraph g = ops({1, 1, 1, 1});
  g.edges = {{0, 2, 9}, {1, 2, 8}, {1, 3, 1}, {0, 3, 5}};
  EXPECT_EQ(largest_edge_favourite_children(g).child, (std::vector<int>{2, 3, -1, -1}));
}

TEST(Place, LargeGraphSkipsTheLpAndSaysSo) {
  const OpGraph g = random_layered_graph({1200, 100, 3, 5});
  ASSERT_GT(static_cast<int>(g.edges.size()), kSctLpMaxEdges);
  const Assignment p = place(g, {4, 1e12, 1e-5, 1e10}, Placer::m_sct);
  EXPECT_NE(p.note.find("LP skipped: " + std::to_string(g.edges.size()) + " edges > 1000"),
            std::string::npos)
      << p.note;
}

TEST(Place, SameInputSamePlacement) {
  const OpGraph g = random_layered_graph({450, 100, 3, 3});  // ~700 edges: m-SCT solves its LP
  const Devices d{4, 1e9, 1e-5, 1e10};
  for (Placer a : kAll) {
    const Assignment first = place(g, d, a);
    const Assignment second = place(g, d, a);
    EXPECT_EQ(first.device, second.device) << placer_name(a);
    EXPECT_EQ(first.start_s, second.start_s) << placer_name(a);
    EXPECT_EQ(first.memory_bytes, second.memory_bytes) << placer_name(a);
    EXPECT_EQ(first.makespan_s, second.makespan_s) << placer_name(a);
    EXPECT_EQ(first.note, second.note) << placer_name(a);
  }
}

// Expectation: evaluate() replays m-ETF's assignment into m-ETF's own schedule.
TEST(Place, EvaluateRebuildsEtfsSchedule) {
  const OpGraph g = random_layered_graph({450, 50, 3, 4});
  const Devices d{4, 1e9, 1e-5, 1e10};
  const Assignment etf = place(g, d, Placer::m_etf);
  const Assignment replay = evaluate(g, d, etf.device);
  EXPECT_EQ(replay.start_s, etf.start_s);
  EXPECT_EQ(replay.makespan_s, etf.makespan_s);
}

// Expectation: 10,000 ops on 8 devices with half as much memory again as the
// graph holds: every placer finds a feasible placement, no makespan beats the
// critical path or an eighth of the total compute, and the two list schedulers
// come within 1.5 times the larger of those bounds.
TEST(Place, TenThousandOpsOnEightDevices) {
  const OpGraph g = random_layered_graph({});
  double memory = 0, compute = 0;
  for (const OpNode& op : g.nodes) {
    memory += op.memory_bytes;
    compute += op.compute_s;
  }
  const Devices d{8, 1.5 * memory / 8, 1e-5, 1e10};
  const double bound = std::max(single_device_lower_bound_s(g), compute / 8);
  for (Placer a : kAll) {
    const Assignment p = place(g, d, a);
    expect_valid(g, d, p);
    EXPECT_TRUE(p.feasible) << placer_name(a) << ": " << p.note;
    EXPECT_GE(p.makespan_s, bound) << placer_name(a);
    if (a != Placer::m_topo) {
      EXPECT_LE(p.makespan_s, 1.5 * bound) << placer_name(a);
    }
  }
}

// Colocation: ops a and c form a group of 3 + 3 bytes, b takes 2; no edges, 1 s
// each, 2 devices of 7 bytes. Whatever the algorithm, a and c share a device,
// which is charged all 6 bytes when the first of them lands, so b (6 + 2 > 7)
// must go on the other device.
TEST(Place, ColocationGroupsStayTogetherAndChargeTheirMemoryAtOnce) {
  OpGraph g;
  g.nodes = {{"a", 1, 3, 0, 0}, {"b", 1, 2, 0, -1}, {"c", 1, 3, 0, 0}};
  const Devices d{2, 7, 0, 1};
  for (Placer a : kAll) {
    const Assignment p = place(g, d, a);
    expect_valid(g, d, p);
    EXPECT_EQ(p.device[0], p.device[2]) << placer_name(a);
    EXPECT_NE(p.device[1], p.device[0]) << placer_name(a);
    EXPECT_DOUBLE_EQ(p.memory_bytes[p.device[0]], 6) << placer_name(a);
    EXPECT_TRUE(p.feasible) << placer_name(a) << ": " << p.note;
  }
}

// Four independent 1 s ops on two devices: m-ETF alone runs two on each device
// (makespan 2 s); grouping ops 0, 1 and 2 puts three on one device (3 s).
TEST(Place, ColocationOverridesEarliestStart) {
  OpGraph g = ops({1, 1, 1, 1});
  for (int v = 0; v < 3; ++v) g.nodes[v].group = 5;
  const Devices d{2, 100, 0, 1};
  EXPECT_DOUBLE_EQ(place(ops({1, 1, 1, 1}), d, Placer::m_etf).makespan_s, 2);
  for (Placer a : kAll) {
    const Assignment p = place(g, d, a);
    expect_valid(g, d, p);
    EXPECT_EQ(p.device[0], p.device[1]) << placer_name(a);
    EXPECT_EQ(p.device[0], p.device[2]) << placer_name(a);
    EXPECT_DOUBLE_EQ(p.makespan_s, 3) << placer_name(a);
  }
  EXPECT_EQ(g.groups(), 6);
}

TEST(Place, GroupsAreCheckedInGraphsAndAssignments) {
  OpGraph g = ops({1, 1});
  g.nodes[1].group = -2;
  EXPECT_NE(thrown_by(g).find("group = -2"), std::string::npos) << thrown_by(g);
  g.nodes[0].group = g.nodes[1].group = 0;
  try {
    (void)evaluate(g, {2, 10, 0, 1}, {0, 1});
    ADD_FAILURE() << "a split group was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("colocation group 0 is split"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace myriad::models::place
