#include "sim/step/collective_lowering.hpp"

#include <fmt/format.h>
#include <simgrid/s4u.hpp>

#include <stdexcept>
#include <vector>

#include "kernels/collectives/byte_accounting.hpp"
#include "sim/engine/engine_config.hpp"

namespace myriad::sim {
namespace {

namespace sg4 = simgrid::s4u;
using kernels::collectives::Schedule;
using kernels::collectives::StepKind;

// A ring of n hosts; the link out of host r carries r -> r+1 only.
std::vector<sg4::Host*> ring_platform(int n, const LoweringLink& link) {
  sg4::NetZone* zone = sg4::create_full_zone("ring");
  std::vector<sg4::Host*> hosts;
  hosts.reserve(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r)
    hosts.push_back(zone->create_host(fmt::format("rank{}", r), 1e9)->seal());
  for (int r = 0; r < n && n > 1; ++r) {
    sg4::Link* l = zone->create_link(fmt::format("edge{}", r), link.link_Bps)
                       ->set_latency(link.latency_s)
                       ->seal();
    zone->add_route(hosts[static_cast<std::size_t>(r)]->get_netpoint(),
                    hosts[static_cast<std::size_t>((r + 1) % n)]->get_netpoint(), nullptr, nullptr,
                    {sg4::LinkInRoute(l)}, false);
  }
  zone->seal();
  return hosts;
}

void check_ring(const Schedule& s) {
  const int n = s.nranks();
  for (int r = 0; r < n; ++r) {
    for (const auto& step : s.rank_steps(r)) {
      if (step.kind == StepKind::send && step.peer != (r + 1) % n) {
        throw std::invalid_argument(fmt::format(
            "collective lowering: rank {} sends to rank {}, not to the next rank of the ring", r,
            step.peer));
      }
    }
  }
}

sg4::Mailbox* edge(int from, int channel) {
  return sg4::Mailbox::by_name(fmt::format("edge{}.{}", from, channel));
}

// One engine per call; returns the simulated time when every actor is done.
template <typename Play>
double run(const Schedule& s, const LoweringLink& link, bool sanitizer_safe, Play play) {
  check_ring(s);
  int argc = 1;
  char name[] = "myriad";
  char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  apply_engine_config(sanitizer_safe);
  const std::vector<sg4::Host*> hosts = ring_platform(s.nranks(), link);
  for (int r = 0; r < s.nranks(); ++r) {
    sg4::Actor::create(fmt::format("rank{}", r), hosts[static_cast<std::size_t>(r)],
                       [&play, r] { play(r); });
  }
  engine.run();
  return sg4::Engine::get_clock();
}

int token = 0;  // payload of every message: only sizes and order matter

}  // namespace

double simulate_chunked(const Schedule& s, const LoweringLink& link, bool sanitizer_safe) {
  return run(s, link, sanitizer_safe, [&s](int r) {
    std::vector<sg4::CommPtr> sends;
    for (const auto& step : s.rank_steps(r)) {
      switch (step.kind) {
        case StepKind::send:
          sends.push_back(
              edge(r, step.channel)->put_async(&token, static_cast<uint64_t>(step.bytes)));
          break;
        case StepKind::recv:
        case StepKind::recv_reduce:
          (void)edge(step.peer, step.channel)->get<int>();
          break;
        case StepKind::copy:
          break;
      }
    }
    for (const auto& c : sends) c->wait();
  });
}

double simulate_phased(const Schedule& s, const LoweringLink& link, bool sanitizer_safe) {
  const std::vector<std::int64_t> sent = kernels::collectives::bytes_sent(s);
  // The sequential steps of one rank on one channel: a ring's 2(n-1) or n-1.
  std::size_t sends = 0;
  for (const auto& step : s.rank_steps(0)) sends += step.kind == StepKind::send ? 1 : 0;
  const double steps = static_cast<double>(sends) / s.spec.channels;
  const double flow_end = run(s, link, sanitizer_safe, [&s, &sent](int r) {
    if (s.nranks() < 2) return;
    sg4::CommPtr out =
        edge(r, 0)->put_async(&token, static_cast<uint64_t>(sent[static_cast<std::size_t>(r)]));
    (void)edge((r + s.nranks() - 1) % s.nranks(), 0)->get<int>();
    out->wait();
  });
  // The flow paid one latency; the other steps' latencies are added analytically.
  return s.nranks() < 2 ? 0 : flow_end + (steps - 1) * link.latency_s;
}

}  // namespace myriad::sim
