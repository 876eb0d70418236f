#include "models/random/random_stream.hpp"

#include <cmath>

namespace myriad::models {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30U)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27U)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31U);
}

RandomStream::RandomStream(std::uint64_t scenario_seed, std::uint64_t index)
    : engine_(splitmix64(splitmix64(scenario_seed) ^ splitmix64(index + 1))) {}

double RandomStream::uniform() {
  constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;
  return static_cast<double>(engine_() >> 11U) * kTwoToMinus53;
}

double RandomStream::exponential(double mean) { return -mean * std::log1p(-uniform()); }

double RandomStream::weibull(double shape, double mean) {
  const double scale = mean / std::tgamma(1.0 + 1.0 / shape);
  return scale * std::pow(-std::log1p(-uniform()), 1.0 / shape);
}

}  // namespace myriad::models
