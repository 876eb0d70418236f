// Myriad's random draws (campaign failures, stragglers, calibration inputs):
// std::mt19937_64 and our own distribution code, because std:: distributions
// differ between standard libraries and Myriad promises the same output for the
// same seed everywhere.
#pragma once

#include <cstdint>
#include <random>

namespace myriad::models {

// SplitMix64 (Steele, Lea, Flood 2014): spreads nearby seeds over the state; also
// the counter-based generator of the calibration grid's inputs.
std::uint64_t splitmix64(std::uint64_t x);

class RandomStream {
 public:
  // A stream for seed index `index` of a scenario seeded with `scenario_seed`.
  RandomStream(std::uint64_t scenario_seed, std::uint64_t index);

  // Uniform in [0, 1), 53 random bits.
  double uniform();
  // Exponential with the given mean.
  double exponential(double mean);
  // Weibull with shape k and the given mean: scale = mean / Gamma(1 + 1/k).
  double weibull(double shape, double mean);

 private:
  std::mt19937_64 engine_;
};

}  // namespace myriad::models
