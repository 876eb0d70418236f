#include "tools/cli/report_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace myriad::cli {

Table::Table(std::vector<std::string> headers, std::string align)
    : headers_(std::move(headers)), align_(std::move(align)) {
  align_.resize(headers_.size(), 'l');
}

void Table::add(std::vector<std::string> row) {
  row.resize(headers_.size());
  rows_.push_back(std::move(row));
}

void Table::add_rule() { rows_.emplace_back(); }

std::string Table::str(int indent) const {
  std::vector<std::size_t> width(headers_.size());
  for (std::size_t c = 0; c < headers_.size(); ++c) width[c] = headers_[c].size();
  for (const auto& row : rows_) {
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string out = pad;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) out += "  ";
      out += align_[c] == 'r' ? fmt::format("{:>{}}", cells[c], width[c])
                              : fmt::format("{:<{}}", cells[c], width[c]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  // The rule spans the columns; a left-aligned last column of prose (an example
  // message, a source) counts for at most kProseRule, or its header: a rule as
  // long as the longest sentence was 250 to 450 characters wide.
  constexpr std::size_t kProseRule = 40;
  std::size_t total = 0;
  for (std::size_t c = 0; c < width.size(); ++c) {
    const bool prose = c + 1 == width.size() && align_[c] == 'l' && c > 0;
    total += prose ? std::min(width[c], std::max(headers_[c].size(), kProseRule)) : width[c];
  }
  total += 2 * (width.size() - 1);
  const std::string rule = pad + std::string(total, '-') + "\n";
  // A table whose headers are all empty prints no header and no rule under it.
  const bool headless =
      std::all_of(headers_.begin(), headers_.end(), [](const std::string& h) { return h.empty(); });
  std::string out = headless ? "" : line(headers_) + rule;
  for (const auto& row : rows_) out += row.empty() ? rule : line(row);
  return out;
}

std::string percent(double fraction, int decimals) {
  return fmt::format("{:.{}f} %", fraction * 100, decimals);
}

std::string seconds(double s) {
  if (s == 0) return "0";
  if (std::fabs(s) < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
  if (std::fabs(s) < 1) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

std::string gibibytes(double bytes) {
  return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024.0 * 1024.0));
}

std::string capacity(double bytes) {
  return fmt::format("{:.0f} GB ({})", bytes / 1e9, gibibytes(bytes));
}

std::string si_count(double n) {
  if (n >= 1e12) return fmt::format("{:.2f} T", n / 1e12);
  if (n >= 1e9) return fmt::format("{:.2f} B", n / 1e9);  // billions, as token counts are written
  if (n >= 1e6) return fmt::format("{:.2f} M", n / 1e6);
  if (n >= 1e3) return fmt::format("{:.2f} k", n / 1e3);
  return fmt::format("{:.0f}", n);
}

std::string decimal_bytes(double bytes) {
  if (bytes >= 1e12) return fmt::format("{:.3g} TB", bytes / 1e12);
  if (bytes >= 1e9) return fmt::format("{:.3g} GB", bytes / 1e9);
  if (bytes >= 1e6) return fmt::format("{:.3g} MB", bytes / 1e6);
  if (bytes >= 1e3) return fmt::format("{:.3g} kB", bytes / 1e3);
  return fmt::format("{:.0f} B", bytes);
}

std::string stage_layers_text(const std::vector<int>& layers) {
  std::string out;
  for (std::size_t i = 0; i < layers.size();) {
    std::size_t j = i;
    while (j < layers.size() && layers[j] == layers[i]) ++j;
    out += (out.empty() ? "" : " ") + std::to_string(layers[i]);
    if (j - i > 1) out += "x" + std::to_string(j - i);
    i = j;
  }
  return out;
}

}  // namespace myriad::cli
