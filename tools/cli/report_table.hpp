// A plain-text table with aligned columns, for the reports every verb prints.
#pragma once

#include <string>
#include <vector>

namespace myriad::cli {

class Table {
 public:
  // `align` per column: 'l' or 'r'.
  Table(std::vector<std::string> headers, std::string align);
  void add(std::vector<std::string> row);
  void add_rule();  // a separating line
  [[nodiscard]] std::string str(int indent = 2) const;

 private:
  std::vector<std::string> headers_;
  std::string align_;
  std::vector<std::vector<std::string>> rows_;  // an empty row is a rule
};

// "12.3 %", "1.25 s", "41.2 GiB", "2.03 M": fixed formats for reports.
std::string percent(double fraction, int decimals = 1);
std::string seconds(double s);
std::string gibibytes(double bytes);
// A memory capacity as datasheets write it and in binary units: "80 GB (74.5 GiB)".
std::string capacity(double bytes);
std::string si_count(double n);
// A message or buffer size with a decimal prefix: "1.05 MB", "1.07 GB".
std::string decimal_bytes(double bytes);
// Pipeline stages' layers, repeats folded: "7 8x14 7".
std::string stage_layers_text(const std::vector<int>& layers);

}  // namespace myriad::cli
