#include "models/place/placer.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "models/place/sct_lp.hpp"

namespace myriad::models::place {
namespace {

struct Step {
  int op = -1;
  int device = -1;
  double start = 0;
};

// (start, op, device), lexicographically: the order m-ETF breaks ties in.
bool earlier(const Step& a, const std::optional<Step>& b) {
  if (!b) return true;
  if (a.start != b->start) return a.start < b->start;
  if (a.op != b->op) return a.op < b->op;
  return a.device < b->device;
}

// One device's ready ops: those whose inputs are all there by the time the
// device frees up, by index, and the others by the time their inputs arrive.
// The first op of either kind, lower index on ties, is the one m-ETF would start
// first here; keeping them apart spares a scan of every ready op at every step.
class DeviceQueue {
 public:
  void add(int op, double data_ready, double free_at) {
    if (data_ready <= free_at) {
      available_.insert(op);
    } else {
      waiting_.insert({data_ready, op});
    }
  }
  void remove(int op, double data_ready) {
    if (available_.erase(op) == 0) waiting_.erase({data_ready, op});
  }
  // The device is now free at `free_at`: ops with inputs there by then join the others.
  void advance(double free_at) {
    while (!waiting_.empty() && waiting_.begin()->first <= free_at) {
      available_.insert(waiting_.begin()->second);
      waiting_.erase(waiting_.begin());
    }
  }
  bool empty() const { return available_.empty() && waiting_.empty(); }
  // The op that can start first here, and when.
  std::pair<double, int> front(double free_at) const {
    if (!available_.empty()) return {free_at, *available_.begin()};
    return *waiting_.begin();
  }

 private:
  std::set<int> available_;
  std::set<std::pair<double, int>> waiting_;
};

struct SchedulerOptions {
  const std::vector<int>* fixed = nullptr;             // evaluate(): every op's device
  const std::vector<int>* favourite_parent = nullptr;  // m-SCT: per op, or -1
  bool enforce_memory = true;
};

struct Schedule {
  std::vector<int> device;
  std::vector<double> start;
  double makespan = 0;
  std::vector<double> peak_bytes;  // per device
};

// The list scheduler all placers share. Each step places one ready op (all its
// parents placed) on one device, at the earliest time the device is free and
// its inputs have arrived:
//   - m-ETF: the (op, device) pair that starts first, lower op then lower device
//     on ties, over the devices with room for the op;
//   - evaluate(): the same, each op restricted to its given device;
//   - m-SCT: first the favourite rule (pick_favourite), then m-ETF.
// An op with room on no device (`stranded_`) goes first, to the device it
// overfills least, so that the schedule stays whole.
class ListScheduler {
 public:
  ListScheduler(const OpGraph& g, const Devices& d, SchedulerOptions options)
      : g_(g),
        d_(d),
        options_(options),
        adj_(adjacency(g)),
        n_(static_cast<int>(g.nodes.size())),
        devices_(d.count),
        missing_(n_),
        holders_(n_, 0),
        data_ready_(static_cast<std::size_t>(n_) * devices_),
        queues_(devices_),
        free_at_(devices_, 0),
        resident_(devices_, 0),
        scratch_(devices_, 0),
        group_device_(g.groups(), -1),
        group_bytes_(g.groups(), 0) {
    for (const OpNode& node : g.nodes) {
      if (node.group >= 0) group_bytes_[node.group] += node.memory_bytes;
    }
    sched_.device.assign(n_, -1);
    sched_.start.assign(n_, 0);
    finish_.assign(n_, 0);
  }

  Schedule run() {
    for (int v = 0; v < n_; ++v) {
      missing_[v] = static_cast<int>(adj_.in[v].size());
      if (missing_[v] == 0) make_ready(v);
    }
    for (int placed = 0; placed < n_; ++placed) {
      std::optional<Step> step;
      if (options_.favourite_parent) step = pick_favourite();
      if (!step) step = pick_earliest();
      if (!stranded_.empty()) step = pick_stranded();
      if (!step) throw std::logic_error("ListScheduler: no op is ready; the graph has a cycle");
      commit(*step);
    }
    sched_.peak_bytes.resize(devices_);
    for (int dev = 0; dev < devices_; ++dev) {
      sched_.peak_bytes[dev] = resident_[dev] + scratch_[dev];
    }
    return std::move(sched_);
  }

 private:
  int first_device(int op) const { return options_.fixed ? (*options_.fixed)[op] : 0; }
  int end_device(int op) const { return options_.fixed ? (*options_.fixed)[op] + 1 : devices_; }

  // The resident bytes placing `op` adds: its own, its whole group's for the
  // group's first op, nothing for the others (their group is already charged).
  double charge(int op) const {
    const int group = g_.nodes[op].group;
    if (group < 0) return g_.nodes[op].memory_bytes;
    return group_device_[group] < 0 ? group_bytes_[group] : 0;
  }
  // Whether `op` may go on `dev`: anywhere, unless its group is placed elsewhere.
  bool allowed(int op, int dev) const {
    const int group = g_.nodes[op].group;
    return group < 0 || group_device_[group] < 0 || group_device_[group] == dev;
  }
  double peak_with(int op, int dev) const {
    const OpNode& node = g_.nodes[op];
    return resident_[dev] + charge(op) + std::max(scratch_[dev], node.temp_bytes);
  }
  // Only ever turns false as a device fills or a group settles elsewhere, which
  // lets queues drop ops for good. (A group's op that did not fit on a device
  // before its group settled there is placed by pick_stranded.)
  bool fits(int op, int dev) const {
    return allowed(op, dev) && (!options_.enforce_memory || peak_with(op, dev) <= d_.memory_bytes);
  }
  std::size_t slot(int op, int dev) const { return static_cast<std::size_t>(op) * devices_ + dev; }
  double ready_at(int op, int dev) const { return data_ready_[slot(op, dev)]; }
  double start_on(int op, int dev) const { return std::max(free_at_[dev], ready_at(op, dev)); }

  // When every input of `op` would be on `dev`: a parent's finish, plus the
  // transfer when the parent sits elsewhere.
  double inputs_arrive(int op, int dev) const {
    double t = 0;
    for (int e : adj_.in[op]) {
      const OpEdge& edge = g_.edges[e];
      const double sent = sched_.device[edge.from] == dev ? 0 : d_.transfer_s(edge.bytes);
      t = std::max(t, finish_[edge.from] + sent);
    }
    return t;
  }

  void make_ready(int op) {
    for (int dev = first_device(op); dev < end_device(op); ++dev) {
      data_ready_[slot(op, dev)] = inputs_arrive(op, dev);
      if (!fits(op, dev)) continue;
      queues_[dev].add(op, ready_at(op, dev), free_at_[dev]);
      ++holders_[op];
    }
    if (holders_[op] == 0) stranded_.insert(op);
    if (options_.favourite_parent && (*options_.favourite_parent)[op] >= 0) favourites_.insert(op);
  }

  // The op that can start first on `dev`, and when, after dropping the ops that
  // lost their room there.
  std::optional<std::pair<double, int>> front(int dev) {
    DeviceQueue& queue = queues_[dev];
    while (!queue.empty()) {
      const auto [start, op] = queue.front(free_at_[dev]);
      if (fits(op, dev)) return std::pair{start, op};
      queue.remove(op, ready_at(op, dev));
      if (--holders_[op] == 0) stranded_.insert(op);
    }
    return std::nullopt;
  }

  std::optional<Step> pick_earliest() {
    std::optional<Step> best;
    for (int dev = 0; dev < devices_; ++dev) {
      const auto first = front(dev);
      if (first && earlier({first->second, dev, first->first}, best)) {
        best = Step{first->second, dev, first->first};
      }
    }
    return best;
  }

  // m-SCT's rule. A ready op j whose favourite parent sits on device D is
  // urgent when
  //   1. j has room on D;
  //   2. j starts on D no later than on any other device with room for it:
  //      keeping it beside its parent costs it nothing against m-ETF's choice;
  //   3. no other ready op could start on D sooner: D is not kept idle for j.
  // Urgent ops are placed before m-ETF's choice, the earliest start first, lower
  // index on ties. So a favourite child takes D from ops that would start there
  // at the same time (which m-ETF settles by index), and from ops that m-ETF's
  // picks on other devices would make ready before j's turn, as Hanen and
  // Munier's SCT runs an urgent child on its parent's processor before anything
  // else. Without rule 3 (reserving D even if it idles) makespans came out 6 to
  // 77% above m-ETF's on random layered graphs; with it they are within 2%, and
  // up to 5% below on narrow graphs with slow links. A favourite child that lost
  // its room on D is left to m-ETF for good.
  std::optional<Step> pick_favourite() {
    std::optional<Step> best;
    for (auto it = favourites_.begin(); it != favourites_.end();) {
      const int op = *it;
      const int beside = sched_.device[(*options_.favourite_parent)[op]];
      if (!fits(op, beside)) {
        it = favourites_.erase(it);
        continue;
      }
      ++it;
      const double here = start_on(op, beside);
      if (urgent(op, beside, here) && earlier({op, beside, here}, best)) {
        best = Step{op, beside, here};
      }
    }
    return best;
  }

  // Rules 2 and 3 of pick_favourite.
  bool urgent(int op, int beside, double here) {
    for (int dev = 0; dev < devices_; ++dev) {
      if (dev != beside && fits(op, dev) && start_on(op, dev) < here) return false;
    }
    const auto first = front(beside);  // j itself when nothing else starts sooner
    return !first || first->second == op || first->first >= here;
  }

  Step pick_stranded() const {
    const int op = *stranded_.begin();
    int best = -1;
    for (int dev = first_device(op); dev < end_device(op); ++dev) {
      if (allowed(op, dev) && (best < 0 || peak_with(op, dev) < peak_with(op, best))) best = dev;
    }
    return {op, best, start_on(op, best)};
  }

  void commit(const Step& step) {
    const int op = step.op;
    for (int dev = first_device(op); dev < end_device(op); ++dev) {
      queues_[dev].remove(op, ready_at(op, dev));
    }
    stranded_.erase(op);
    favourites_.erase(op);
    const OpNode& node = g_.nodes[op];
    sched_.device[op] = step.device;
    sched_.start[op] = step.start;
    finish_[op] = step.start + node.compute_s;
    sched_.makespan = std::max(sched_.makespan, finish_[op]);
    resident_[step.device] += charge(op);
    if (node.group >= 0) group_device_[node.group] = step.device;
    scratch_[step.device] = std::max(scratch_[step.device], node.temp_bytes);
    free_at_[step.device] = finish_[op];
    queues_[step.device].advance(free_at_[step.device]);
    for (int e : adj_.out[op]) {
      if (--missing_[g_.edges[e].to] == 0) make_ready(g_.edges[e].to);
    }
  }

  const OpGraph& g_;
  const Devices& d_;
  SchedulerOptions options_;
  Adjacency adj_;
  int n_;
  int devices_;
  std::vector<int> missing_;         // per op: parents not yet placed
  std::vector<int> holders_;         // per op: device queues holding it
  std::vector<double> data_ready_;   // per (op, device), set when the op turns ready
  std::vector<DeviceQueue> queues_;  // per device
  std::vector<double> free_at_;      // per device
  std::vector<double> resident_;     // per device
  std::vector<double> scratch_;      // per device: largest temp_bytes
  std::vector<double> finish_;       // per op
  std::set<int> stranded_;           // ready ops with room on no device
  std::set<int> favourites_;         // ready ops with a favourite parent
  std::vector<int> group_device_;    // per colocation group: its device, or -1
  std::vector<double> group_bytes_;  // per colocation group: its ops' resident bytes
  Schedule sched_;
};

// "4.5 bytes" below a megabyte, "61.12 GB" (decimal) above.
std::string bytes_text(double bytes) {
  std::ostringstream s;
  if (bytes < 1e6) {
    s << bytes << " bytes";
  } else {
    s.precision(4);
    s << bytes / 1e9 << " GB";
  }
  return s.str();
}

Assignment to_placement(const Devices& d, Schedule s, std::string note) {
  Assignment p;
  p.feasible = true;
  for (int dev = 0; dev < d.count; ++dev) {
    if (s.peak_bytes[dev] <= d.memory_bytes) continue;
    p.feasible = false;
    note += "; infeasible: device " + std::to_string(dev) + " needs " +
            bytes_text(s.peak_bytes[dev]) + " > " + bytes_text(d.memory_bytes);
    break;  // the first is enough to act on
  }
  p.device = std::move(s.device);
  p.start_s = std::move(s.start);
  p.makespan_s = s.makespan;
  p.memory_bytes = std::move(s.peak_bytes);
  p.note = std::move(note);
  return p;
}

Schedule schedule_fixed(const OpGraph& g, const Devices& d, const std::vector<int>& device) {
  return ListScheduler(g, d, {&device, nullptr, false}).run();
}

// m-TOPO. Each device takes ops in topological order while its resident bytes
// stay within the balanced budget and its peak within its memory; the next op
// then opens the next device. An op larger than the budget still goes on an
// empty device when it fits there. The last device ignores the budget, which
// op sizes rarely divide evenly; ops left over once it is full stay on it and
// make the placement infeasible.
Assignment place_topo(const OpGraph& g, const Devices& d) {
  double total = 0;
  std::vector<double> group_bytes(g.groups(), 0);
  for (const OpNode& op : g.nodes) {
    total += op.memory_bytes;
    if (op.group >= 0) group_bytes[op.group] += op.memory_bytes;
  }
  const double budget = total / d.count;
  std::vector<int> device(g.nodes.size(), d.count - 1);
  std::vector<int> group_device(g.groups(), -1);
  std::vector<double> resident(d.count, 0), scratch(d.count, 0);
  int dev = 0;
  int left_over = 0;
  for (int op : g.topo_order()) {
    const OpNode& node = g.nodes[op];
    if (node.group >= 0 && group_device[node.group] >= 0) {  // its group has settled
      const int at = group_device[node.group];
      device[op] = at;
      scratch[at] = std::max(scratch[at], node.temp_bytes);
      continue;
    }
    const double bytes = node.group >= 0 ? group_bytes[node.group] : node.memory_bytes;
    for (;; ++dev) {
      const double after = resident[dev] + bytes;
      const double peak = after + std::max(scratch[dev], node.temp_bytes);
      const bool within_budget = after <= budget || resident[dev] == 0;
      if (dev == d.count - 1 || (within_budget && peak <= d.memory_bytes)) {
        left_over += peak > d.memory_bytes ? 1 : 0;
        device[op] = dev;
        if (node.group >= 0) group_device[node.group] = dev;
        resident[dev] = after;
        scratch[dev] = std::max(scratch[dev], node.temp_bytes);
        break;
      }
    }
  }
  std::string note = "m-TOPO: budget " + bytes_text(budget) + " a device";
  if (left_over > 0) note += "; " + std::to_string(left_over) + " ops had no room left";
  return to_placement(d, schedule_fixed(g, d, device), note);
}

Assignment place_etf(const OpGraph& g, const Devices& d) {
  return to_placement(d, ListScheduler(g, d, {}).run(), "m-ETF: earliest task first");
}

struct Favourites {
  std::vector<int> parent;  // per op, or -1
  std::string how;
};

Favourites choose_favourites(const OpGraph& g, const Devices& d) {
  const int edges = static_cast<int>(g.edges.size());
  std::optional<FavouriteChildren> lp;
  std::string how;
  if (edges > kSctLpMaxEdges) {
    how = "LP skipped: " + std::to_string(edges) + " edges > " + std::to_string(kSctLpMaxEdges) +
          "; favourite children by largest edge";
  } else if ((lp = sct_favourite_children(g, d))) {
    how = "LP solved by GLPK: " + std::to_string(lp->variables) + " variables, " +
          std::to_string(lp->constraints) + " constraints";
  } else {
    how = sct_lp_available() ? "GLPK found no optimum: favourite children by largest edge"
                             : "GLPK absent: favourite children by largest edge";
  }
  const FavouriteChildren f = lp ? *lp : largest_edge_favourite_children(g);
  Favourites out{std::vector<int>(g.nodes.size(), -1), how};
  for (int v = 0; v < static_cast<int>(f.child.size()); ++v) {
    if (f.child[v] >= 0) out.parent[f.child[v]] = v;
  }
  return out;
}

Assignment place_sct(const OpGraph& g, const Devices& d) {
  const Favourites favourites = choose_favourites(g, d);
  Schedule s = ListScheduler(g, d, {nullptr, &favourites.parent, true}).run();
  int pairs = 0, beside = 0;
  for (int v = 0; v < static_cast<int>(g.nodes.size()); ++v) {
    const int parent = favourites.parent[v];
    if (parent < 0) continue;
    ++pairs;
    beside += s.device[v] == s.device[parent] ? 1 : 0;
  }
  return to_placement(d, std::move(s),
                      "m-SCT: " + favourites.how + "; " + std::to_string(beside) + " of " +
                          std::to_string(pairs) + " favourite children beside their parent");
}

}  // namespace

void Devices::validate() const {
  const bool ok = count >= 1 && memory_bytes > 0 && latency_s >= 0 && std::isfinite(latency_s) &&
                  bandwidth_Bps > 0;
  if (ok) return;
  std::ostringstream s;
  s << "Devices: need count >= 1, memory_bytes > 0, 0 <= latency_s < inf and bandwidth_Bps > 0; "
    << "got count " << count << ", memory_bytes " << memory_bytes << ", latency_s " << latency_s
    << ", bandwidth_Bps " << bandwidth_Bps;
  throw std::invalid_argument(s.str());
}

const char* placer_name(Placer a) {
  switch (a) {
    case Placer::m_topo:
      return "m-TOPO";
    case Placer::m_etf:
      return "m-ETF";
    case Placer::m_sct:
      return "m-SCT";
  }
  return "?";
}

Assignment place(const OpGraph& g, const Devices& d, Placer a) {
  g.validate();
  d.validate();
  switch (a) {
    case Placer::m_topo:
      return place_topo(g, d);
    case Placer::m_etf:
      return place_etf(g, d);
    case Placer::m_sct:
      return place_sct(g, d);
  }
  throw std::invalid_argument("place: unknown algorithm");
}

Assignment evaluate(const OpGraph& g, const Devices& d, std::vector<int> device) {
  g.validate();
  d.validate();
  if (device.size() != g.nodes.size()) {
    throw std::invalid_argument("evaluate: " + std::to_string(device.size()) + " devices for " +
                                std::to_string(g.nodes.size()) + " ops");
  }
  for (std::size_t v = 0; v < device.size(); ++v) {
    if (device[v] < 0 || device[v] >= d.count) {
      throw std::invalid_argument("evaluate: op " + std::to_string(v) + " is on device " +
                                  std::to_string(device[v]) + ", outside [0, " +
                                  std::to_string(d.count) + ")");
    }
  }
  std::vector<int> group_at(g.groups(), -1);
  for (std::size_t v = 0; v < device.size(); ++v) {
    const int group = g.nodes[v].group;
    if (group < 0) continue;
    if (group_at[group] >= 0 && group_at[group] != device[v]) {
      throw std::invalid_argument("evaluate: colocation group " + std::to_string(group) +
                                  " is split: op " + std::to_string(v) + " is on device " +
                                  std::to_string(device[v]) + ", another of its ops on " +
                                  std::to_string(group_at[group]));
    }
    group_at[group] = device[v];
  }
  return to_placement(d, schedule_fixed(g, d, device), "given assignment");
}

double single_device_lower_bound_s(const OpGraph& g) {
  const Adjacency adj = adjacency(g);
  std::vector<double> finish(g.nodes.size(), 0);
  double longest = 0;
  for (int v : g.topo_order()) {
    double start = 0;
    for (int e : adj.in[v]) start = std::max(start, finish[g.edges[e].from]);
    finish[v] = start + g.nodes[v].compute_s;
    longest = std::max(longest, finish[v]);
  }
  return longest;
}

}  // namespace myriad::models::place
