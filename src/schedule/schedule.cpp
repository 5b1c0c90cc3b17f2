#include "schedule/schedule.hpp"

#include <stdexcept>

namespace topsim {

namespace {
void check_after(const std::vector<std::size_t>& after, std::size_t next) {
  for (std::size_t i : after)
    if (i >= next) throw std::invalid_argument("schedule: an op may only wait for earlier ops");
}
}  // namespace

std::size_t Schedule::transfer(int src_gpu, int dst_gpu, double size_B, std::vector<std::size_t> after,
                               bool route_latency) {
  check_after(after, ops.size());
  Op op;
  op.kind = Op::Kind::transfer;
  op.src_gpu = src_gpu;
  op.dst_gpu = dst_gpu;
  op.size_B = size_B;
  op.route_latency = route_latency;
  op.after = std::move(after);
  ops.push_back(std::move(op));
  return ops.size() - 1;
}

std::size_t Schedule::composite(std::size_t index, double size_B, std::vector<std::size_t> after) {
  check_after(after, ops.size());
  Op op;
  op.kind = Op::Kind::composite;
  op.composite = index;
  op.size_B = size_B;
  op.after = std::move(after);
  ops.push_back(std::move(op));
  return ops.size() - 1;
}

std::size_t Schedule::delay(int gpu, double delay_s, std::vector<std::size_t> after) {
  check_after(after, ops.size());
  Op op;
  op.kind = Op::Kind::delay;
  op.src_gpu = gpu;
  op.delay_s = delay_s;
  op.after = std::move(after);
  ops.push_back(std::move(op));
  return ops.size() - 1;
}

}  // namespace topsim
