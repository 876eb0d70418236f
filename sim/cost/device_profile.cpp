#include "sim/cost/device_profile.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "models/scenario/json_file.hpp"

namespace myriad::sim {
namespace {

constexpr ProfileScalar kScalars[] = {
    {"bf16_peak_flops", &DeviceProfile::bf16_flops, 1e9, 1e17},
    {"fp8_peak_flops", &DeviceProfile::fp8_flops, 0, 1e17},
    {"hbm_bandwidth_Bps", &DeviceProfile::hbm_bw_Bps, 1e9, 1e14},
    {"nvlink_bandwidth_Bps", &DeviceProfile::nvlink_bw_Bps, 1e6, 1e14},
    {"gemm_efficiency", &DeviceProfile::gemm_efficiency, 1e-4, 1},
    {"gemm_fp8_efficiency", &DeviceProfile::gemm_fp8_efficiency, 0, 1},
    {"gemm_k_half", &DeviceProfile::gemm_k_half, 0, 1e6},
    {"gemm_latency_s", &DeviceProfile::gemm_latency_s, 0, 1e-3},
    {"sms", &DeviceProfile::sms, 1, 1e4},
    {"attention_fwd_efficiency", &DeviceProfile::attention_fwd_efficiency, 1e-4, 1},
    {"attention_bwd_efficiency", &DeviceProfile::attention_bwd_efficiency, 1e-4, 1},
    {"memory_efficiency", &DeviceProfile::memory_efficiency, 0.01, 1},
    {"sustained_clock_fraction", &DeviceProfile::sustained_clock, 0.5, 1},
    {"kernel_overhead_s", &DeviceProfile::kernel_overhead_s, 0, 1e-3},
    {"nic_efficiency", &DeviceProfile::nic_efficiency, 0.01, 1},
    {"nccl_channels", &DeviceProfile::nccl_channels, 0, 64},
    {"memory_reserved_bytes", &DeviceProfile::memory_reserved_bytes, 0, 1e12},
    {"memory_fragmentation", &DeviceProfile::memory_fragmentation, 0, 1},
    // Optional: only scenarios that prune experts or fuse communication read them.
    {"sparse_gemm_efficiency", &DeviceProfile::sparse_gemm_efficiency, 0.05, 1, false},
    {"grouped_gemm_efficiency", &DeviceProfile::grouped_gemm_efficiency, 0.05, 1, false},
    {"fused_overlap_exposed", &DeviceProfile::fused_overlap_exposed, 0, 1, false},
    // Only activation offload (parallelism.offload_layers) reads them.
    {"host_to_device_efficiency", &DeviceProfile::host_to_device_efficiency, 0.05, 1, false},
    {"device_to_host_efficiency", &DeviceProfile::device_to_host_efficiency, 0.05, 1, false},
    // Kernels the host issues wait for it where it is slower than the GPU.
    {"host_launch_s", &DeviceProfile::host_launch_s, 0, 1e-3, false},
    // Only the calibration fit reads it (copies within the cache left out).
    {"last_level_cache_bytes", &DeviceProfile::last_level_cache_bytes, 0, 1e11, false},
    // The attention kernel's shape (sim/cost/attention_shape.hpp): all five or none.
    {"attention_fwd_softmax_share", &DeviceProfile::attention_fwd_softmax_share, 0, 0.95, false},
    {"attention_bwd_softmax_share", &DeviceProfile::attention_bwd_softmax_share, 0, 0.95, false},
    {"attention_fwd_row_tiles", &DeviceProfile::attention_fwd_row_tiles, 0, 64, false},
    {"attention_bwd_row_tiles", &DeviceProfile::attention_bwd_row_tiles, 0, 64, false},
    {"attention_diagonal_tiles", &DeviceProfile::attention_diagonal_tiles, 0, 64, false},
    // Only with an NVLS curve, which needs it (read_algorithm checks both ways): the
    // ring's large-message bus bandwidth over the link rate.
    {"nvlink_ring_busbw_fraction", &DeviceProfile::ring_busbw_fraction, 0.05, 1, false},
};

constexpr double kMaxBusbwOverLinkRate = 2;

constexpr const ProfileScalar& kRing = kScalars[std::size(kScalars) - 1];
constexpr std::string_view kRingFraction = kRing.key;

const char* const kOrigins[] = {"datasheet", "measured", "published",
                                "derived",   "fitted",   "assumption"};

void read_parameter(const nlohmann::json& j, const std::string& key, DeviceProfile& p,
                    std::vector<std::string>& problems) {
  if (!j.is_object() || !j.contains("value") || !j["value"].is_number() || !j.contains("origin") ||
      !j["origin"].is_string()) {
    problems.push_back(
        fmt::format("parameters.{}: expected {{\"value\": number, \"origin\": "
                    "string, \"note\": string}}",
                    key));
    return;
  }
  ProfileParameter param{j["value"].get<double>(), j["origin"].get<std::string>(),
                         j.value("note", std::string{})};
  if (std::find(std::begin(kOrigins), std::end(kOrigins), param.origin) == std::end(kOrigins)) {
    problems.push_back(
        fmt::format("parameters.{}.origin: expected datasheet, measured, "
                    "published, derived, fitted or assumption, found '{}'",
                    key, param.origin));
  }
  p.parameters[key] = param;
}

// The attention shape parameters describe one kernel together: all or none.
void check_attention_shape(DeviceProfile& p, std::vector<std::string>& problems) {
  static constexpr std::string_view kKeys[] = {
      "attention_fwd_softmax_share", "attention_bwd_softmax_share", "attention_fwd_row_tiles",
      "attention_bwd_row_tiles", "attention_diagonal_tiles"};
  std::vector<std::string_view> missing;
  for (const auto key : kKeys) {
    if (!p.parameters.contains(std::string(key))) missing.push_back(key);
  }
  p.attention_shape = missing.empty();
  // The matrix products cannot run above the tensor cores' peak: at head dim 128
  // they take 1 - share of the time, at least the efficiency's worth of it.
  if (p.attention_shape) {
    const auto check = [&](std::string_view dir, double efficiency, double share) {
      if (efficiency > 1 - share + 1e-9) {
        problems.push_back(fmt::format(
            "parameters.attention_{}_efficiency: {} is above 1 - attention_{}_softmax_share "
            "({}): the matrix products alone would run above the tensor cores' peak",
            dir, efficiency, dir, 1 - share));
      }
    };
    check("fwd", p.attention_fwd_efficiency, p.attention_fwd_softmax_share);
    check("bwd", p.attention_bwd_efficiency, p.attention_bwd_softmax_share);
  }
  if (!missing.empty() && missing.size() < std::size(kKeys)) {
    problems.push_back(fmt::format(
        "parameters: the attention shape parameters go together; missing {} (or give none of "
        "them for a flat attention efficiency)",
        fmt::join(missing, ", ")));
  }
}

void read_curve(const nlohmann::json& j, DeviceProfile& p, std::vector<std::string>& problems) {
  if (!j.is_array() || j.empty()) {
    problems.push_back("nvlink_busbw: expected a non-empty list of [bytes, busbw_Bps] pairs");
    return;
  }
  for (const auto& point : j) {
    if (!point.is_array() || point.size() != 2 || !point[0].is_number() || !point[1].is_number() ||
        point[0].get<double>() <= 0 || point[1].get<double>() <= 0) {
      problems.push_back("nvlink_busbw: each point must be [bytes > 0, busbw_Bps > 0]");
      return;
    }
    p.nvlink_busbw.push_back({point[0].get<double>(), point[1].get<double>()});
  }
  std::sort(p.nvlink_busbw.begin(), p.nvlink_busbw.end(),
            [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
}

void read_tiles(const nlohmann::json& j, DeviceProfile& p, std::vector<std::string>& problems) {
  const char* expected =
      "gemm_tiles: expected {\"origin\": string, \"note\": string, \"tiles\": "
      "[[m, n, relative throughput], ...]}";
  if (!j.is_object() || !j.contains("tiles") || !j["tiles"].is_array() || j["tiles"].empty() ||
      !j.contains("origin")) {
    problems.emplace_back(expected);
    return;
  }
  for (const auto& t : j["tiles"]) {
    if (!t.is_array() || t.size() != 3 || !t[0].is_number() || !t[1].is_number() ||
        !t[2].is_number() || t[0].get<double>() < 1 || t[1].get<double>() < 1 ||
        t[2].get<double>() <= 0 || t[2].get<double>() > 1) {
      problems.emplace_back(expected);
      return;
    }
    p.gemm_tiles.push_back({t[0].get<double>(), t[1].get<double>(), t[2].get<double>()});
  }
}

// Optional: {"norm": {"value": 0.8, "origin": "measured", "note": ...}, ...}.
void read_families(const nlohmann::json& j, DeviceProfile& p, std::vector<std::string>& problems) {
  if (!j.is_object()) {
    problems.emplace_back(
        "memory_bound_kernels: expected {\"family\": {\"value\": number, \"origin\": string}}");
    return;
  }
  for (const auto& item : j.items()) {
    const std::string key = "memory_bound_kernels." + item.key();
    DeviceProfile scratch;
    read_parameter(item.value(), key, scratch, problems);
    const auto it = scratch.parameters.find(key);
    if (it == scratch.parameters.end()) continue;
    if (!(it->second.value > 0 && it->second.value <= 10)) {
      problems.push_back(
          fmt::format("{}: expected a value in (0, 10], found {}", key, it->second.value));
      continue;
    }
    p.memory_bound_efficiency[item.key()] = it->second.value;
    p.parameters[key] = it->second;
  }
}

// "nvlink_busbw_algorithm": "ring" (default) or "nvls", and with nvls the ring's
// ceiling as parameters.nvlink_ring_busbw_fraction.
void read_algorithm(const nlohmann::json& root, DeviceProfile& p,
                    std::vector<std::string>& problems) {
  const auto algo = root.find("nvlink_busbw_algorithm");
  if (algo != root.end()) {
    if (!algo->is_string() || (*algo != "ring" && *algo != "nvls")) {
      problems.emplace_back(
          "nvlink_busbw_algorithm: expected \"ring\" or \"nvls\", the algorithm NCCL ran when "
          "the all-reduce curve was measured");
      return;
    }
    p.busbw_nvls = *algo == "nvls";
  }
  const auto it = p.parameters.find(std::string(kRingFraction));
  if (!p.busbw_nvls) {
    if (it != p.parameters.end()) {
      problems.push_back(
          fmt::format("parameters.{}: only an NVLS curve (nvlink_busbw_algorithm: nvls) takes it",
                      kRingFraction));
    }
    return;
  }
  if (it == p.parameters.end()) {
    problems.push_back(fmt::format(
        "parameters.{}: missing: an NVLS curve needs the ring's large-message bus bandwidth over "
        "the link rate, for the collectives NVLS does not run",
        kRingFraction));
    return;
  }
  if (!(it->second.value > kRing.min && it->second.value <= kRing.max)) {
    problems.push_back(fmt::format("parameters.{}: expected a value in ({}, {}], found {}",
                                   kRingFraction, kRing.min, kRing.max, it->second.value));
  }
  p.ring_busbw_fraction = it->second.value;
}

// The curve at `link_Bps`, and its ring version.
void price_curves(DeviceProfile& p, double link_Bps) {
  const double scale = link_Bps / p.reference.nvlink_bw_Bps;
  p.nvlink_ring_busbw = p.reference_nvlink_busbw;
  for (auto& point : p.nvlink_ring_busbw) point.busbw_Bps *= scale;
  std::vector<BusBandwidthPoint> measured = p.nvlink_ring_busbw;
  if (p.busbw_nvls) {
    for (auto& point : p.nvlink_ring_busbw) {
      point.busbw_Bps = std::min(point.busbw_Bps, p.ring_busbw_fraction * link_Bps);
    }
  }
  p.nvlink_busbw = p.all_reduce_nvls() ? measured : p.nvlink_ring_busbw;
}

}  // namespace

std::span<const ProfileScalar> profile_scalars() { return kScalars; }

std::span<const char* const> profile_origins() { return kOrigins; }

std::string_view profile_key(double DeviceProfile::*member) {
  for (const auto& s : kScalars) {
    if (s.member == member) return s.key;
  }
  throw std::logic_error("profile_key: not a scalar parameter of a device profile");
}

double memory_efficiency_of(const DeviceProfile& profile, std::string_view op_name) {
  // The longest measured prefix: "norm.layer.bwd", then "norm.layer", then "norm".
  std::string_view family = op_name;
  while (!family.empty()) {
    const auto it = profile.memory_bound_efficiency.find(family);
    if (it != profile.memory_bound_efficiency.end()) return it->second;
    const auto dot = family.rfind('.');
    if (dot == std::string_view::npos) break;
    family = family.substr(0, dot);
  }
  return profile.memory_efficiency;
}

DeviceProfile load_profile(const std::string& path) {
  return parse_profile(models::scenario::read_json_file(path, "device profile"), path);
}

DeviceProfile parse_profile(const nlohmann::json& root, const std::string& path) {
  if (!root.is_object()) {
    throw std::runtime_error(fmt::format("{}: a device profile is a JSON object", path));
  }
  DeviceProfile p;
  p.file = path;
  std::vector<std::string> problems;
  for (const auto& [key, value] : root.items()) {
    if (key != "device" && key != "kind" && key != "sources" && key != "parameters" &&
        key != "nvlink_busbw" && key != "gemm_tiles" && key != "memory_bound_kernels" &&
        key != "provenance" && key != "nvlink_busbw_algorithm") {
      problems.push_back(fmt::format("{}: unknown key", key));
    }
  }
  p.device = root.value("device", std::string{});
  p.kind = root.value("kind", std::string{});
  if (p.device.empty()) problems.push_back("device: expected the GPU's name");
  if (p.kind.empty()) problems.push_back("kind: expected how the profile was made");
  const nlohmann::json params = root.value("parameters", nlohmann::json::object());
  for (const auto& item : params.items()) {
    const std::string& key = item.key();
    const auto* known = std::find_if(std::begin(kScalars), std::end(kScalars),
                                     [&](const ProfileScalar& s) { return key == s.key; });
    if (known == std::end(kScalars)) {
      problems.push_back(fmt::format("parameters.{}: unknown parameter", key));
      continue;
    }
    read_parameter(item.value(), key, p, problems);
  }
  for (const auto& s : kScalars) {
    if (&s == &kRing) continue;  // read_algorithm reads it with the curve it belongs to
    const auto it = p.parameters.find(std::string(s.key));
    if (it == p.parameters.end()) {
      if (s.required) problems.push_back(fmt::format("parameters.{}: missing", s.key));
      continue;
    }
    const double v = it->second.value;
    if (v < s.min || v > s.max) {
      problems.push_back(fmt::format("parameters.{}: expected a value in [{}, {}], found {}", s.key,
                                     s.min, s.max, v));
    }
    p.*(s.member) = v;
  }
  check_attention_shape(p, problems);
  read_curve(root.value("nvlink_busbw", nlohmann::json::array()), p, problems);
  read_algorithm(root, p, problems);
  read_tiles(root.value("gemm_tiles", nlohmann::json::object()), p, problems);
  read_families(root.value("memory_bound_kernels", nlohmann::json::object()), p, problems);
  // NVLS reduces inside the switch, so its bus bandwidth may pass the link rate, but
  // not by much: a curve far above it was written against another link rate.
  for (const auto& point : p.nvlink_busbw) {
    if (p.nvlink_bw_Bps > 0 && point.busbw_Bps > kMaxBusbwOverLinkRate * p.nvlink_bw_Bps) {
      problems.push_back(fmt::format(
          "nvlink_busbw: {:.4g} B/s at {:.4g} B is over {} times parameters.nvlink_bandwidth_Bps "
          "({:.4g} B/s), the link rate the curve is relative to",
          point.busbw_Bps, point.bytes, kMaxBusbwOverLinkRate, p.nvlink_bw_Bps));
      break;
    }
  }
  p.hardware = p.device;
  p.reference = {p.bf16_flops, p.fp8_flops, p.hbm_bw_Bps, p.nvlink_bw_Bps, p.sms};
  p.reference_nvlink_busbw = p.nvlink_busbw;
  p.nvls = p.busbw_nvls;
  if (!problems.empty()) {
    std::string message =
        fmt::format("{}: {} problem(s) in device profile:", path, problems.size());
    for (const auto& pr : problems) message += "\n  " + pr;
    throw std::runtime_error(message);
  }
  price_curves(p, p.nvlink_bw_Bps);
  return p;
}

DeviceProfile on_hardware(const DeviceProfile& profile, const models::scenario::GpuSpec& gpu) {
  DeviceProfile p = profile;
  p.hardware = gpu.name;
  p.bf16_flops = gpu.bf16_flops;
  p.fp8_flops = gpu.fp8_flops;
  p.hbm_bw_Bps = gpu.hbm_bw_Bps;
  p.nvlink_bw_Bps = gpu.nvlink_bw_Bps;
  p.sms = gpu.sms > 0 ? gpu.sms : p.reference.sms;
  p.nvls = gpu.nvls;
  price_curves(p, gpu.nvlink_bw_Bps);
  return p;
}

bool is_on_hardware(const DeviceProfile& p, const models::scenario::GpuSpec& gpu) {
  return p.hardware == gpu.name && p.bf16_flops == gpu.bf16_flops && p.fp8_flops == gpu.fp8_flops &&
         p.hbm_bw_Bps == gpu.hbm_bw_Bps && p.nvlink_bw_Bps == gpu.nvlink_bw_Bps &&
         p.sms == (gpu.sms > 0 ? gpu.sms : p.reference.sms) && p.nvls == gpu.nvls;
}

std::string nvlink_algorithm_note(const DeviceProfile& p) {
  if (p.all_reduce_nvls()) {
    return fmt::format(
        "all-reduce inside a node by NVLS (the profile's curve); all-gather, reduce-scatter and "
        "all-to-all by ring, at most {:.0f} GB/s bus bandwidth ({:.0f} % of the link)",
        p.ring_busbw_fraction * p.nvlink_bw_Bps / 1e9, 100 * p.ring_busbw_fraction);
  }
  if (p.busbw_nvls) {
    return fmt::format(
        "collectives inside a node by ring, at most {:.0f} GB/s bus bandwidth: {} has no NVLS "
        "(cluster.gpu.nvls), so the profile's NVLS all-reduce curve is capped at the ring's",
        p.ring_busbw_fraction * p.nvlink_bw_Bps / 1e9, p.hardware);
  }
  if (p.nvls) {
    return fmt::format(
        "collectives inside a node by ring: {} has NVLS but the profile's curve was measured "
        "without it, so no NVLS speed-up is priced",
        p.hardware);
  }
  return "collectives inside a node by ring (no NVLS)";
}

double interpolate_busbw(const std::vector<BusBandwidthPoint>& curve, double bytes) {
  if (curve.empty()) return 0;
  if (bytes >= curve.back().bytes) return curve.back().busbw_Bps;
  if (bytes <= curve.front().bytes) return curve.front().busbw_Bps;
  for (std::size_t i = 1; i < curve.size(); ++i) {
    if (bytes <= curve[i].bytes) {
      const auto& a = curve[i - 1];
      const auto& b = curve[i];
      const double x = std::log(bytes / a.bytes) / std::log(b.bytes / a.bytes);
      return a.busbw_Bps + x * (b.busbw_Bps - a.busbw_Bps);
    }
  }
  return curve.back().busbw_Bps;
}

}  // namespace myriad::sim
