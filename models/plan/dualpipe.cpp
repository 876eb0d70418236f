// DualPipe's order (DeepSeek-V3 technical report, s3.2.1; the order of
// deepseek-ai/DualPipe's DualPipe.step, its eight phases), as data.
#include <stdexcept>
#include <string>
#include <vector>

#include "models/plan/pipeline_schedule.hpp"

namespace myriad::models {
namespace {

// One rank's order, built phase by phase. A rank's local phase 0 is the
// direction in which it sits `half_rank` stages from the start; the task's
// chunk is the global direction (0: from the first rank, 1: from the last).
class DualPipeOrder {
 public:
  DualPipeOrder(int pp, int m, int rank)
      : pp_(pp),
        half_(pp / 2),
        half_rank_(std::min(rank, pp - 1 - rank)),
        half_m_(m / 2),
        second_(rank >= pp / 2) {}

  std::vector<PipelineTask> build() {
    const int h = half_;
    const int r = half_rank_;
    const bool middle = r == h - 1;
    for (int i = 0; i < (h - r - 1) * 2; ++i) forward(0);  // nF0
    for (int i = 0; i < r + 1; ++i) {                      // nF0F1
      forward(0);
      forward(1);
    }
    for (int i = 0; i < h - r - 1; ++i) {  // nB1W1F1, zero bubble
      backward(1, true);
      weight();
      forward(1);
    }
    for (int i = 0; i < half_m_ - pp_ + r + 1; ++i) {  // nF0B1F1B0, the main phase
      if (i == 0 && middle) {  // not overlapped, "to further reduce bubble size"
        forward(0);
        backward(1, false);
      } else {
        pair(0, 1);
      }
      pair(1, 0);
    }
    for (int i = 0; i < h - r - 1; ++i) {  // nB1F1B0
      backward(1, false);
      pair(1, 0);
    }
    const int last = r + 1;  // nB1B0: the second half with zero bubble
    bool zb = false;
    for (int i = 0; i < last; ++i) {
      if (i == last / 2 && r % 2 == 1) zb = true;
      backward(1, zb);
      if (i == last / 2 && r % 2 == 0) zb = true;
      backward(0, zb);
    }
    for (int i = 0; i < h - r - 1; ++i) {  // nWB0, zero bubble
      weight();
      backward(0, true);
    }
    for (int i = 0; i < r + 1; ++i) weight();  // nW
    if (waiting_ != weights_.size() || forwards_[0] != half_m_ || forwards_[1] != half_m_ ||
        backwards_[0] != half_m_ || backwards_[1] != half_m_) {
      throw std::logic_error("dualpipe_order: the phases do not run every pass once");
    }
    return std::move(order_);
  }

 private:
  [[nodiscard]] int direction(int phase) const { return phase ^ (second_ ? 1 : 0); }
  void forward(int phase) { order_.push_back({true, direction(phase), forwards_[phase]++}); }
  // A backward, whole or (zero bubble) its input gradients, its weight
  // gradients queued for a later weight().
  void backward(int phase, bool zero_bubble) {
    const PipelineTask t{false, direction(phase), backwards_[phase]++,
                         zero_bubble ? PassPart::input : PassPart::whole};
    order_.push_back(t);
    if (zero_bubble) weights_.push_back({false, t.chunk, t.micro_batch, PassPart::weight});
  }
  void weight() {
    if (waiting_ >= weights_.size()) {
      throw std::logic_error("dualpipe_order: a weight pass before its input gradients");
    }
    order_.push_back(weights_[waiting_++]);
  }
  // A forward of one phase overlapped with a (whole) backward of the other.
  void pair(int forward_phase, int backward_phase) {
    forward(forward_phase);
    order_.back().paired = true;
    backward(backward_phase, false);
  }

  int pp_;
  int half_;
  int half_rank_;
  int half_m_;
  bool second_;
  int forwards_[2] = {0, 0};
  int backwards_[2] = {0, 0};
  std::vector<PipelineTask> weights_;  // queued, oldest first
  std::size_t waiting_ = 0;            // the next to run
  std::vector<PipelineTask> order_;
};

}  // namespace

std::vector<PipelineTask> dualpipe_order(int pp, int m, int stage) {
  if (pp < 2 || pp % 2 != 0 || stage < 0 || stage >= pp) {
    throw std::invalid_argument("dualpipe_order: need an even pp >= 2 and 0 <= stage < pp (pp " +
                                std::to_string(pp) + ", stage " + std::to_string(stage) + ")");
  }
  if (m % 2 != 0 || m < 2 * pp) {
    throw std::invalid_argument(
        "dualpipe_order: need an even number of micro-batches, at least 2 pp (" +
        std::to_string(m) + " for pp " + std::to_string(pp) + ")");
  }
  return DualPipeOrder(pp, m, stage).build();
}

}  // namespace myriad::models
