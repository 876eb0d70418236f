#include "kernels/collectives/checker.hpp"

#include <fmt/format.h>

#include <map>
#include <span>
#include <vector>

#include "kernels/collectives/postcondition.hpp"
#include "kernels/collectives/symbolic_buffer.hpp"

namespace myriad::kernels::collectives {
namespace {

// A send in flight: the sender's step and the symbolic contents of its chunks,
// for each chunk its origin followed by its set of ranks (`words` words).
struct Message {
  int step = 0;
  int first = 0;
  int count = 0;
  std::vector<std::uint64_t> data;

  // Where chunk i's entry starts: an origin and `words` words per chunk.
  static std::size_t entry(int i, int words) {
    return static_cast<std::size_t>(i) * (static_cast<std::size_t>(words) + 1);
  }
  [[nodiscard]] int origin(int i, int words) const {
    return static_cast<int>(data[entry(i, words)]);
  }
  [[nodiscard]] std::span<const std::uint64_t> ranks(int i, int words) const {
    return std::span(data).subspan(entry(i, words) + 1, static_cast<std::size_t>(words));
  }
};

// The messages in flight on one (src, dst, channel), oldest at `head`. A
// channel with nothing in flight is removed, so that the maps stay small.
struct Fifo {
  std::vector<Message> messages;
  std::size_t head = 0;
};

// A rank's incoming channels, keyed by src * channels + channel.
using Inbox = std::map<std::int64_t, Fifo>;

CheckResult failure(int rank, int index, const Step& step, const std::string& what) {
  return {false, rank, index,
          fmt::format("rank {}, step {} ({}): {}", rank, index, describe(step), what)};
}

CheckResult fail_schedule(const std::string& what) { return {false, -1, -1, "schedule: " + what}; }

bool overlap(int a, int b, int count) { return a < b + count && b < a + count; }

class Checker {
 public:
  explicit Checker(const Schedule& schedule) : s_(schedule) {}
  CheckResult run();

 private:
  // The steps return false once they have recorded a failure in failure_.
  [[nodiscard]] CheckResult check_shape() const;
  bool check_step(int rank, int index);
  bool advance(int rank, bool& progressed);
  bool send(int rank, int index, const Step& step);
  bool copy(int rank, int index, const Step& step);
  bool receive(int rank, int index, const Step& step, const Message& m);
  bool reduce_chunk(int rank, int index, const Step& step, const Message& m, int i);
  bool fail(int rank, int index, const Step& step, const std::string& what) {
    failure_ = failure(rank, index, step, what);
    return false;
  }
  [[nodiscard]] CheckResult diagnose_stall() const;
  [[nodiscard]] CheckResult check_leftovers() const;
  [[nodiscard]] const Step& step_at(int rank, std::size_t index) const {
    return s_.rank_steps(rank)[index];
  }
  [[nodiscard]] std::int64_t inbox_key(int src, int channel) const {
    return std::int64_t{src} * s_.spec.channels + channel;
  }

  const Schedule& s_;
  CheckResult failure_;
  std::vector<SymbolicBuffer> state_;
  std::vector<std::size_t> next_;  // each rank's next step
  std::vector<Inbox> inboxes_;     // inboxes_[dst]
};

CheckResult Checker::run() {
  if (CheckResult shape = check_shape(); !shape.ok) return shape;
  const int n = s_.nranks();
  for (int r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < s_.rank_steps(r).size(); ++i) {
      if (!check_step(r, static_cast<int>(i))) return failure_;
    }
  }
  state_ = initial_state(s_);
  next_.assign(static_cast<std::size_t>(n), 0);
  inboxes_.resize(static_cast<std::size_t>(n));
  for (bool progressed = true; progressed;) {
    progressed = false;
    for (int r = 0; r < n; ++r) {
      if (!advance(r, progressed)) return failure_;
    }
  }
  for (int r = 0; r < n; ++r) {
    if (next_[static_cast<std::size_t>(r)] < s_.rank_steps(r).size()) return diagnose_stall();
  }
  if (CheckResult left = check_leftovers(); !left.ok) return left;
  return check_postcondition(s_, state_);
}

CheckResult Checker::check_shape() const {
  const int n = s_.nranks();
  if (n < 1) return fail_schedule(fmt::format("nranks must be at least 1, got {}", n));
  if (s_.steps.size() != static_cast<std::size_t>(n)) {
    return fail_schedule(fmt::format("{} step lists for {} ranks", s_.steps.size(), n));
  }
  if (s_.spec.channels < 1) {
    return fail_schedule(fmt::format("channels must be at least 1, got {}", s_.spec.channels));
  }
  if (s_.layouts.size() != 1 && s_.layouts.size() != static_cast<std::size_t>(n)) {
    return fail_schedule(
        fmt::format("{} layouts for {} ranks; need 1 or {}", s_.layouts.size(), n, n));
  }
  return {};
}

bool Checker::check_step(int rank, int index) {
  const Step& step = step_at(rank, static_cast<std::size_t>(index));
  const ChunkLayout& layout = s_.layout(rank);
  if (step.kind != StepKind::copy) {
    if (step.peer < 0 || step.peer >= s_.nranks()) {
      return fail(rank, index, step,
                  fmt::format("peer {} is not one of the {} ranks", step.peer, s_.nranks()));
    }
    if (step.peer == rank) return fail(rank, index, step, "names its own rank as its peer");
    if (step.channel < 0 || step.channel >= s_.spec.channels) {
      return fail(rank, index, step,
                  fmt::format("channel {} is outside [0, {})", step.channel, s_.spec.channels));
    }
  }
  if (!layout.contains(step.chunk, step.count)) {
    return fail(rank, index, step,
                fmt::format("chunks [{}, {}) are not within the rank's {} chunks", step.chunk,
                            step.chunk + step.count, layout.nchunks()));
  }
  if (step.kind == StepKind::copy) {
    if (!layout.contains(step.src_chunk, step.count)) {
      return fail(rank, index, step,
                  fmt::format("source chunk {} is not within the rank's {} chunks", step.src_chunk,
                              layout.nchunks()));
    }
    if (overlap(step.src_chunk, step.chunk, step.count)) {
      return fail(rank, index, step, "copies a range onto an overlapping range");
    }
  }
  const std::int64_t bytes = layout.range_bytes(step.chunk, step.count);
  if (step.bytes != bytes) {
    return fail(rank, index, step,
                fmt::format("says {} bytes, but its chunks hold {}", step.bytes, bytes));
  }
  return true;
}

bool Checker::advance(int rank, bool& progressed) {
  const std::vector<Step>& steps = s_.rank_steps(rank);
  std::size_t& next = next_[static_cast<std::size_t>(rank)];
  Inbox& inbox = inboxes_[static_cast<std::size_t>(rank)];
  for (; next < steps.size(); ++next, progressed = true) {
    const Step& step = steps[next];
    const int index = static_cast<int>(next);
    bool done = true;
    if (step.kind == StepKind::send) {
      done = send(rank, index, step);
    } else if (step.kind == StepKind::copy) {
      done = copy(rank, index, step);
    } else {
      const auto channel = inbox.find(inbox_key(step.peer, step.channel));
      if (channel == inbox.end()) return true;  // waits
      Fifo& fifo = channel->second;
      const Message m = std::move(fifo.messages[fifo.head++]);
      if (fifo.head == fifo.messages.size()) inbox.erase(channel);
      done = receive(rank, index, step, m);
    }
    if (!done) return false;
  }
  return true;
}

bool Checker::send(int rank, int index, const Step& step) {
  const SymbolicBuffer& buf = state_[static_cast<std::size_t>(rank)];
  Message m{index, step.chunk, step.count, {}};
  m.data.reserve(Message::entry(step.count, buf.words()));
  for (int c = step.chunk; c < step.chunk + step.count; ++c) {
    if (!buf.defined(c)) {
      return fail(rank, index, step, fmt::format("sends chunk {}, which holds no data yet", c));
    }
    m.data.push_back(static_cast<std::uint64_t>(buf.origin(c)));
    const auto set = buf.ranks(c);
    m.data.insert(m.data.end(), set.begin(), set.end());
  }
  inboxes_[static_cast<std::size_t>(step.peer)][inbox_key(rank, step.channel)].messages.push_back(
      std::move(m));
  return true;
}

bool Checker::copy(int rank, int index, const Step& step) {
  SymbolicBuffer& buf = state_[static_cast<std::size_t>(rank)];
  for (int i = 0; i < step.count; ++i) {
    const int from = step.src_chunk + i;
    if (!buf.defined(from)) {
      return fail(rank, index, step, fmt::format("copies chunk {}, which holds no data yet", from));
    }
    buf.assign(step.chunk + i, buf.origin(from), buf.ranks(from));
  }
  return true;
}

bool Checker::receive(int rank, int index, const Step& step, const Message& m) {
  const auto sender = [&] {
    const Step& sent = step_at(step.peer, static_cast<std::size_t>(m.step));
    return fmt::format("rank {}, step {} ({})", step.peer, m.step, describe(sent));
  };
  if (m.count != step.count || (s_.recv_names_sent_chunks() && m.first != step.chunk)) {
    return fail(rank, index, step, "does not match the send it receives: " + sender());
  }
  const bool same_chunks = s_.layouts.size() == 1 && m.first == step.chunk;
  for (int i = 0; i < step.count && !same_chunks; ++i) {
    const std::int64_t out = s_.layout(step.peer).size(m.first + i);
    const std::int64_t in = s_.layout(rank).size(step.chunk + i);
    if (out != in) {
      return fail(rank, index, step,
                  fmt::format("receives {} bytes into a {}-byte chunk from {}", out, in, sender()));
    }
  }
  SymbolicBuffer& buf = state_[static_cast<std::size_t>(rank)];
  for (int i = 0; i < step.count; ++i) {
    if (step.kind == StepKind::recv_reduce) {
      if (!reduce_chunk(rank, index, step, m, i)) return false;
    } else {
      buf.assign(step.chunk + i, m.origin(i, buf.words()), m.ranks(i, buf.words()));
    }
  }
  return true;
}

bool Checker::reduce_chunk(int rank, int index, const Step& step, const Message& m, int i) {
  SymbolicBuffer& buf = state_[static_cast<std::size_t>(rank)];
  const int c = step.chunk + i;
  const int origin = m.origin(i, buf.words());
  const auto set = m.ranks(i, buf.words());
  if (!buf.defined(c)) {
    return fail(rank, index, step,
                fmt::format("reduces into chunk {}, which holds no data yet", c));
  }
  if (buf.origin(c) != origin) {
    return fail(rank, index, step,
                fmt::format("adds data of chunk {} (sent by rank {} at its step {}) into chunk {}, "
                            "which holds data of chunk {}",
                            origin, step.peer, m.step, c, buf.origin(c)));
  }
  if (const int twice = first_common(buf.ranks(c), set); twice >= 0) {
    return fail(
        rank, index, step,
        fmt::format("counts rank {}'s contribution twice: chunk {} already holds {}, and "
                    "rank {}'s step {} sent {}",
                    twice, c, format_ranks(buf.ranks(c)), step.peer, m.step, format_ranks(set)));
  }
  buf.merge(c, set);
  return true;
}

CheckResult Checker::diagnose_stall() const {
  // Every stuck rank waits on a recv from one peer: follow the waits from the
  // first stuck rank until a rank that has finished, or until a rank repeats.
  const int n = s_.nranks();
  int blocked = 0;
  int start = -1;
  for (int r = 0; r < n; ++r) {
    if (next_[static_cast<std::size_t>(r)] >= s_.rank_steps(r).size()) continue;
    ++blocked;
    if (start < 0) start = r;
  }
  std::vector<int> path;
  std::vector<int> seen(static_cast<std::size_t>(n), -1);
  int r = start;
  while (next_[static_cast<std::size_t>(r)] < s_.rank_steps(r).size() &&
         seen[static_cast<std::size_t>(r)] < 0) {
    seen[static_cast<std::size_t>(r)] = static_cast<int>(path.size());
    path.push_back(r);
    r = step_at(r, next_[static_cast<std::size_t>(r)]).peer;
  }
  auto at = [this](int rank) {
    const auto i = next_[static_cast<std::size_t>(rank)];
    return std::pair{static_cast<int>(i), step_at(rank, i)};
  };
  if (seen[static_cast<std::size_t>(r)] < 0) {  // r has finished
    const auto [index, step] = at(path.back());
    return failure(path.back(), index, step,
                   fmt::format("deadlock: waits for a message that never comes: rank {} has "
                               "finished without sending it ({} rank(s) blocked)",
                               r, blocked));
  }
  std::string cycle;
  for (auto p = static_cast<std::size_t>(seen[static_cast<std::size_t>(r)]); p < path.size(); ++p) {
    const auto [index, step] = at(path[p]);
    cycle += fmt::format("rank {} at step {} ({}) -> ", path[p], index, describe(step));
  }
  return {
      false, r, static_cast<int>(next_[static_cast<std::size_t>(r)]),
      fmt::format("deadlock: ranks wait for each other in a cycle: {}rank {} ({} rank(s) blocked)",
                  cycle, r, blocked)};
}

CheckResult Checker::check_leftovers() const {
  // Drained channels are removed: any channel left holds a message.
  for (std::size_t dst = 0; dst < inboxes_.size(); ++dst) {
    if (inboxes_[dst].empty()) continue;
    const auto& [key, fifo] = *inboxes_[dst].begin();
    const auto src = static_cast<int>(key / s_.spec.channels);
    const auto channel = static_cast<int>(key % s_.spec.channels);
    const Message& m = fifo.messages[fifo.head];
    return failure(src, m.step, step_at(src, static_cast<std::size_t>(m.step)),
                   fmt::format("never received: rank {} finished without a matching recv on "
                               "channel {} ({} message(s) left there)",
                               dst, channel, fifo.messages.size() - fifo.head));
  }
  return {};
}

}  // namespace

CheckResult check(const Schedule& schedule) { return Checker(schedule).run(); }

}  // namespace myriad::kernels::collectives
