// The minimum of a unimodal function on an interval, by golden-section search:
// the interval shrinks by 0.618 a step, one evaluation a step. Used by the
// calibration fit and by the validation suites' leave-one-out fit.
#pragma once

#include <cmath>

namespace myriad::models {

template <typename F>
double golden_section(F f, double lo, double hi, int iterations = 60) {
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = lo;
  double b = hi;
  double c = b - g * (b - a);
  double d = a + g * (b - a);
  double fc = f(c);
  double fd = f(d);
  for (int i = 0; i < iterations; ++i) {
    if (fc < fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - g * (b - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + g * (b - a);
      fd = f(d);
    }
  }
  return (a + b) / 2;
}

}  // namespace myriad::models
