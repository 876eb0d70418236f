#include "calibration/measure/cases.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace myriad::calibration {

Grid parse_grid(const std::string& name) {
  if (name == "small") return Grid::small;
  if (name == "full") return Grid::full;
  throw std::invalid_argument(fmt::format("grid: expected small or full, found '{}'", name));
}

const char* grid_name(Grid g) { return g == Grid::small ? "small" : "full"; }

Row kernel_row(std::string name, std::string family, const models::Op& op, bool backward,
               nlohmann::json arguments) {
  Row r;
  r.name = std::move(name);
  r.kind = "kernel";
  r.family = std::move(family);
  r.op_class = op.cls;
  r.flops = op.flops;
  r.bytes = backward && op.backward_bytes > 0 ? op.backward_bytes : op.bytes;
  r.gemm = op.gemm;
  r.backward = backward;
  r.arguments = std::move(arguments);
  return r;
}

const char* layout_name(kernels::ops::GemmLayout layout) {
  switch (layout) {
    case kernels::ops::GemmLayout::nn:
      return "nn";
    case kernels::ops::GemmLayout::nt:
      return "nt";
    case kernels::ops::GemmLayout::tn:
      return "tn";
  }
  return "nn";
}

}  // namespace myriad::calibration
