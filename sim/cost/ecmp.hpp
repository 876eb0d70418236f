// ECMP hash collisions (issue 40 item 5; research: docs/notes/ecmp.md). A switch
// that balances by ECMP hashes each flow (a queue pair's 5-tuple: RoCE's source
// port carries the QP's entropy) onto one of its equal-cost up ports, once, for
// the flow's life; it does not look at load. With m long flows hashed onto U
// ports the busiest port carries M >= m / U of them, and the flows on it get
// port / M each. A synchronous collective goes at its slowest flow, so a job
// whose flows leave many subtrees at once waits for the busiest port of all of
// them: the maximum over every port, not one switch's.
//
// Exact for small cases (balls into bins, by a recursion over the ports), Poisson
// otherwise (each port's load Poisson(m / U), ports independent: within 0.7 % of
// exact on the cases of docs/notes/ecmp.md s3).
#pragma once

#include <span>

namespace myriad::sim {

// Subtrees alike: `count` of them, each hashing `flows` flows onto `ports` up ports.
struct HashedPorts {
  double flows = 0;
  double ports = 1;
  double count = 1;
};

// P(no port of any group carries more than k flows).
double all_ports_within(std::span<const HashedPorts> groups, int k);

// What the busiest port does to the flows when each flow alone would use
// `demand` of a port (its NIC's share over the port's bandwidth): the slowdown
// max(1, M x demand), over the hash. `expected` is its mean; `low` and `high` the
// 10th and 90th percentiles (the spread over seeds of the hash).
struct EcmpSlowdown {
  double expected = 1;
  double low = 1;
  double high = 1;
};
EcmpSlowdown ecmp_slowdown(std::span<const HashedPorts> groups, double demand);

}  // namespace myriad::sim
