#include "sim/analytic/host_wait.hpp"

#include <algorithm>

namespace myriad::sim {

double synced_stretch(std::span<const Issued> items) {
  double gpu_total = 0;
  for (const Issued& i : items) gpu_total += i.gpu;
  double issued = 0;            // host time to issue items up to k
  double gpu_left = gpu_total;  // gpu time of items k..n
  double longest = 0;
  for (const Issued& i : items) {
    issued += i.host;
    longest = std::max(longest, issued + gpu_left);
    gpu_left -= i.gpu;
  }
  return longest;
}

double unsynced_wait(double host, double gpu) { return std::max(0.0, host - gpu); }

}  // namespace myriad::sim
