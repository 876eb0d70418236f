// Units at the boundary: scenario strings such as "400Gbps", "50GB/s", "80GiB",
// "2us" or "312TFLOPS" are parsed once into SI doubles (bytes, seconds, bytes/s,
// FLOP/s). Inside Myriad names carry the unit (`bw_Bps`, `latency_s`).
#pragma once

#include <string>
#include <string_view>
#include <variant>

namespace myriad::models::scenario {

enum class Dimension {
  count,      // plain number; suffixes k, M, B (billion), T: "300B" tokens
  time,       // seconds: ns, us, ms, s, min, h, d
  bytes,      // bytes: B, kB, MB, GB, TB (decimal), KiB, MiB, GiB, TiB
  bandwidth,  // bytes/s: bps, Kbps, Mbps, Gbps, Tbps (bits); B/s, KB/s ... TB/s, GiB/s (bytes)
  flop_rate,  // FLOP/s: FLOPS, GFLOPS, TFLOPS, PFLOPS (also "TFLOP/s")
  ratio,      // >= 1: "1:7", "7:1" and "7" all mean 7 to 1
  fraction,   // in [0, 1]: "0.9" or "90%"
};

// The canonical SI unit of a dimension, as printed: "s", "B", "B/s", "FLOP/s", "".
std::string_view canonical_unit(Dimension d);
// A short description of what a dimension accepts, for errors and `explain`.
std::string_view dimension_help(Dimension d);
std::string_view dimension_name(Dimension d);

struct ParseFailure {
  std::string message;  // what was expected, what was found
};

// Parses `text` as a value of dimension `d`, returning the SI value or why not.
std::variant<double, ParseFailure> parse_quantity(std::string_view text, Dimension d);

// Human-readable form with a fitting prefix: 25e9 B/s -> "25 GB/s (200 Gbps)".
std::string format_human(double value, Dimension d);
// Exact, re-parseable form in the canonical unit: 25e9 B/s -> "25000000000B/s".
std::string format_exact(double value, Dimension d);

}  // namespace myriad::models::scenario
