#include "kernels/collectives/group_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "kernels/collectives/checker.hpp"

namespace myriad::kernels::collectives {
namespace {

using StepId = std::pair<int, int>;  // rank, index of the step in the rank's list

struct Range {
  std::int64_t first = 0;
  std::int64_t last = 0;  // exclusive
  [[nodiscard]] bool overlaps(const Range& o) const { return first < o.last && o.first < last; }
};

bool overlaps_any(const Range& r, const std::vector<Range>& others) {
  return std::any_of(others.begin(), others.end(), [&r](const Range& o) { return r.overlaps(o); });
}

bool is_recv(const Step& step) {
  return step.kind == StepKind::recv || step.kind == StepKind::recv_reduce;
}

// Lowers one schedule round by round; see group_plan.hpp for the rules.
class Lowering {
 public:
  explicit Lowering(const Schedule& s) : s_(s), head_(static_cast<std::size_t>(s.nranks()), 0) {
    plan_.nranks = s.nranks();
    plan_.scratch_bytes.assign(head_.size(), 0);
    plan_.staging_bytes.assign(head_.size(), 0);
    pair_steps();
  }

  GroupPlan run() {
    while (!finished()) {
      std::vector<RankRound> round(head_.size());
      bool progress = take_copies(round);
      std::vector<int> len = candidates();
      settle(len);
      if (std::any_of(len.begin(), len.end(), [](int n) { return n > 0; })) {
        post(round, len);
        progress = true;
      } else if (!progress) {
        progress = stage_sends(round);
      }
      if (!progress) throw std::logic_error("make_group_plan: the schedule deadlocks");
      plan_.rounds.push_back(std::move(round));
    }
    return std::move(plan_);
  }

 private:
  [[nodiscard]] const Step& step(StepId id) const {
    return s_.rank_steps(id.first)[static_cast<std::size_t>(id.second)];
  }
  [[nodiscard]] int size(int rank) const { return static_cast<int>(s_.rank_steps(rank).size()); }
  [[nodiscard]] int& head(int rank) { return head_[static_cast<std::size_t>(rank)]; }
  [[nodiscard]] Range range(StepId id) const {
    const std::int64_t first = s_.layout(id.first).offset(step(id).chunk);
    return {first, first + step(id).bytes};
  }

  // The k-th send from s to d on channel c is the k-th receive on d from s on c.
  void pair_steps() {
    std::map<std::tuple<int, int, int>, std::deque<StepId>> sends;
    for (int r = 0; r < s_.nranks(); ++r) {
      for (int i = 0; i < size(r); ++i) {
        const Step& st = step({r, i});
        if (st.kind == StepKind::send) sends[{r, st.peer, st.channel}].emplace_back(r, i);
      }
    }
    for (int r = 0; r < s_.nranks(); ++r) {
      for (int i = 0; i < size(r); ++i) {
        const Step& st = step({r, i});
        if (!is_recv(st)) continue;
        auto& queue = sends[{st.peer, r, st.channel}];
        if (queue.empty()) throw std::logic_error("make_group_plan: a receive without a send");
        partner_[{r, i}] = queue.front();
        partner_[queue.front()] = {r, i};
        queue.pop_front();
      }
    }
  }

  [[nodiscard]] bool finished() {
    for (int r = 0; r < s_.nranks(); ++r) {
      if (head(r) < size(r)) return false;
    }
    return staged_.empty();
  }

  // Copies at the head of a rank run before its group.
  bool take_copies(std::vector<RankRound>& round) {
    bool any = false;
    for (int r = 0; r < s_.nranks(); ++r) {
      while (head(r) < size(r) && step({r, head(r)}).kind == StepKind::copy) {
        const Step& st = step({r, head(r)});
        const std::int64_t from = s_.layout(r).offset(st.src_chunk);
        const std::int64_t to = s_.layout(r).offset(st.chunk);
        round[static_cast<std::size_t>(r)].before.push_back(
            {GroupOpKind::copy, -1, {Region::data, to}, {Region::data, from}, st.bytes});
        ++head(r);
        any = true;
      }
    }
    return any;
  }

  // Per rank, the longest run of sends and receives from the head on disjoint bytes
  // (a send may share bytes with other sends only).
  std::vector<int> candidates() {
    std::vector<int> len(head_.size(), 0);
    for (int r = 0; r < s_.nranks(); ++r) {
      std::vector<Range> reads;
      std::vector<Range> writes;
      for (int i = head(r); i < size(r) && step({r, i}).kind != StepKind::copy; ++i) {
        const Range bytes = range({r, i});
        if (overlaps_any(bytes, writes)) break;
        if (is_recv(step({r, i}))) {
          if (overlaps_any(bytes, reads)) break;
          writes.push_back(bytes);
        } else {
          reads.push_back(bytes);
        }
        ++len[static_cast<std::size_t>(r)];
      }
    }
    return len;
  }

  [[nodiscard]] bool in_round(StepId id, const std::vector<int>& len) {
    const int first = head(id.first);
    return id.second >= first && id.second < first + len[static_cast<std::size_t>(id.first)];
  }

  // Cuts each run back until every send's receive, and every receive's send, is
  // in the round too (or already staged).
  void settle(std::vector<int>& len) {
    for (bool changed = true; changed;) {
      changed = false;
      for (int r = 0; r < s_.nranks(); ++r) {
        for (int t = 0; t < len[static_cast<std::size_t>(r)]; ++t) {
          const StepId partner = partner_.at({r, head(r) + t});
          if (in_round(partner, len) || staged_.contains(partner)) continue;
          len[static_cast<std::size_t>(r)] = t;
          changed = true;
          break;
        }
      }
    }
  }

  void post(std::vector<RankRound>& round, const std::vector<int>& len) {
    // Sends first, staged ones (older) before the rest; remember each one's position.
    std::map<StepId, int> position;
    for (int r = 0; r < s_.nranks(); ++r) {
      for (int t = 0; t < len[static_cast<std::size_t>(r)]; ++t) {
        const StepId id{r, head(r) + t};
        if (!is_recv(step(id)) || !staged_.contains(partner_.at(id))) continue;
        const StepId send = partner_.at(id);
        position[send] = static_cast<int>(round[static_cast<std::size_t>(send.first)].group.size());
        round[static_cast<std::size_t>(send.first)].group.push_back(
            {GroupOpKind::send, r, {}, {Region::staging, staged_.at(send)}, step(send).bytes});
        staged_.erase(send);
      }
    }
    for (int r = 0; r < s_.nranks(); ++r) {
      auto& group = round[static_cast<std::size_t>(r)].group;
      for (int t = 0; t < len[static_cast<std::size_t>(r)]; ++t) {
        const StepId id{r, head(r) + t};
        if (is_recv(step(id))) continue;
        position[id] = static_cast<int>(group.size());
        group.push_back({GroupOpKind::send,
                         step(id).peer,
                         {},
                         {Region::data, range(id).first},
                         step(id).bytes});
      }
    }
    for (int r = 0; r < s_.nranks(); ++r)
      post_receives(round[static_cast<std::size_t>(r)], r, len, position);
    for (int r = 0; r < s_.nranks(); ++r) head(r) += len[static_cast<std::size_t>(r)];
  }

  // Receives ordered by their sends' positions on the sending ranks (NCCL's matching).
  void post_receives(RankRound& rr, int r, const std::vector<int>& len,
                     const std::map<StepId, int>& position) {
    std::vector<std::pair<std::pair<int, int>, StepId>> order;
    for (int t = 0; t < len[static_cast<std::size_t>(r)]; ++t) {
      const StepId id{r, head(r) + t};
      if (!is_recv(step(id))) continue;
      order.push_back({{step(id).peer, position.at(partner_.at(id))}, id});
    }
    std::sort(order.begin(), order.end());
    std::int64_t scratch = 0;
    for (const auto& [key, id] : order) {
      const Step& st = step(id);
      const Place data{Region::data, range(id).first};
      if (st.kind == StepKind::recv) {
        rr.group.push_back({GroupOpKind::recv, st.peer, data, {}, st.bytes});
        continue;
      }
      const Place held{Region::scratch, scratch};
      rr.group.push_back({GroupOpKind::recv, st.peer, held, {}, st.bytes});
      rr.after.push_back({GroupOpKind::reduce, -1, data, held, st.bytes});
      scratch += st.bytes;
    }
    auto& need = plan_.scratch_bytes[static_cast<std::size_t>(r)];
    need = std::max(need, scratch);
  }

  // Nothing can be posted: copy every rank's head send aside, as an eager send would.
  bool stage_sends(std::vector<RankRound>& round) {
    bool any = false;
    for (int r = 0; r < s_.nranks(); ++r) {
      if (head(r) >= size(r) || step({r, head(r)}).kind != StepKind::send) continue;
      const StepId id{r, head(r)};
      auto& used = plan_.staging_bytes[static_cast<std::size_t>(r)];
      round[static_cast<std::size_t>(r)].before.push_back({GroupOpKind::copy,
                                                           -1,
                                                           {Region::staging, used},
                                                           {Region::data, range(id).first},
                                                           step(id).bytes});
      staged_[id] = used;
      used += step(id).bytes;
      ++head(r);
      any = true;
    }
    return any;
  }

  const Schedule& s_;
  std::vector<int> head_;
  std::map<StepId, StepId> partner_;
  std::map<StepId, std::int64_t> staged_;  // staged sends not yet posted: staging offset
  GroupPlan plan_;
};

// A rank's three regions on the host, as floats.
struct HostRank {
  std::vector<float>* data;
  std::vector<float> scratch;
  std::vector<float> staging;

  float* at(const Place& p) {
    std::vector<float>& region =
        p.region == Region::data ? *data : (p.region == Region::scratch ? scratch : staging);
    const auto offset = static_cast<std::size_t>(p.offset / 4);
    if (offset > region.size()) throw std::logic_error("execute_plan: offset out of range");
    return region.data() + offset;
  }
};

std::size_t floats(std::int64_t bytes) { return static_cast<std::size_t>(bytes / 4); }

// One group: every send's bytes are read before any receive writes.
void run_group(const std::vector<RankRound>& round, std::vector<HostRank>& ranks) {
  std::map<std::pair<int, int>, std::deque<std::vector<float>>> wire;  // (src, dst)
  for (std::size_t r = 0; r < round.size(); ++r) {
    for (const GroupOp& op : round[r].group) {
      if (op.kind != GroupOpKind::send) continue;
      const float* from = ranks[r].at(op.src);
      wire[{static_cast<int>(r), op.peer}].emplace_back(from, from + floats(op.bytes));
    }
  }
  for (std::size_t r = 0; r < round.size(); ++r) {
    for (const GroupOp& op : round[r].group) {
      if (op.kind != GroupOpKind::recv) continue;
      auto& queue = wire[{op.peer, static_cast<int>(r)}];
      if (queue.empty() || queue.front().size() != floats(op.bytes)) {
        throw std::logic_error(fmt::format(
            "execute_plan: rank {}'s receive from rank {} has no matching send", r, op.peer));
      }
      std::copy(queue.front().begin(), queue.front().end(), ranks[r].at(op.dst));
      queue.pop_front();
    }
  }
  for (const auto& [key, queue] : wire) {
    if (!queue.empty()) throw std::logic_error("execute_plan: a send without a receive");
  }
}

}  // namespace

void execute_plan(const GroupPlan& plan, std::vector<std::vector<float>>& buffers) {
  if (buffers.size() != static_cast<std::size_t>(plan.nranks)) {
    throw std::invalid_argument("execute_plan: one buffer per rank");
  }
  std::vector<HostRank> ranks;
  for (std::size_t r = 0; r < buffers.size(); ++r) {
    ranks.push_back({&buffers[r], std::vector<float>(floats(plan.scratch_bytes[r])),
                     std::vector<float>(floats(plan.staging_bytes[r]))});
  }
  for (const std::vector<RankRound>& round : plan.rounds) {
    for (std::size_t r = 0; r < round.size(); ++r) {
      for (const GroupOp& op : round[r].before) {
        const float* from = ranks[r].at(op.src);
        std::copy(from, from + floats(op.bytes), ranks[r].at(op.dst));
      }
    }
    run_group(round, ranks);
    for (std::size_t r = 0; r < round.size(); ++r) {
      for (const GroupOp& op : round[r].after) {
        const float* from = ranks[r].at(op.src);
        float* to = ranks[r].at(op.dst);
        for (std::size_t i = 0; i < floats(op.bytes); ++i) to[i] += from[i];
      }
    }
  }
}

GroupPlan make_group_plan(const Schedule& schedule) {
  if (const CheckResult checked = check(schedule); !checked.ok) {
    throw std::invalid_argument("make_group_plan: the schedule fails its check: " +
                                checked.message);
  }
  return Lowering(schedule).run();
}

}  // namespace myriad::kernels::collectives
