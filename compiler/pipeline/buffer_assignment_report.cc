// BufferAssignment::ToString: a human-readable listing of allocations (with
// their color), the buffers each holds (offset, size, live range), the
// shared (in-place) pairs, output copies and each temp arena's efficiency.
#include <algorithm>
#include <sstream>
#include <vector>

#include "compiler/pipeline/buffer_assignment.h"

namespace kiln::pipeline {

namespace {

std::string BufferName(const LogicalBuffer& b) { return b.defining->name() + ShapeIndexToString(b.index); }

}  // namespace

std::string BufferAssignment::ToString() const {
  std::vector<std::vector<int64_t>> by_allocation(allocations_.size());
  for (const LogicalBuffer& b : points_to_.buffers()) by_allocation[placements_[b.id].slice.allocation].push_back(b.id);
  std::ostringstream out;
  out << "BufferAssignment for " << (schedule_.computation ? schedule_.computation->name() : "?") << ": "
      << allocations_.size() << " allocations, " << points_to_.buffers().size() << " buffers\n";
  for (size_t a = 0; a < allocations_.size(); ++a) {
    bool arena = std::any_of(arenas_.begin(), arenas_.end(),
                             [&](const TempArena& t) { return t.allocation == static_cast<int32_t>(a); });
    out << "allocation " << a << ": " << allocations_[a].ToString();
    if (allocations_[a].color == 0) out << " color 0";
    out << (arena ? " (temp arena)" : "") << "\n";
    auto& ids = by_allocation[a];
    std::sort(ids.begin(), ids.end(), [&](int64_t x, int64_t y) {
      return std::make_pair(placements_[x].slice.offset, x) < std::make_pair(placements_[y].slice.offset, y);
    });
    for (int64_t id : ids) {
      const LogicalBuffer& b = points_to_.buffer(id);
      const BufferPlacement& p = placements_[id];
      out << "  " << BufferName(b) << " " << SubShape(b.defining->shape(), b.index)->ToString(false) << " at "
          << p.slice.ToString() << " live [" << p.live_start << ", " << p.live_end << "]\n";
    }
  }
  if (!shared_.empty()) {
    out << "shared (in-place) pairs: " << shared_.size() << "\n";
    for (const SharedPair& s : shared_)
      out << "  " << BufferName(points_to_.buffer(s.operand_buffer)) << " -> "
          << BufferName(points_to_.buffer(s.user_buffer)) << " at "
          << placements_[s.user_buffer].slice.ToString() << "\n";
  }
  for (const OutputCopy& c : output_copies_)
    out << "output copy " << ShapeIndexToString(c.output_index) << ": " << c.from.ToString() << " -> "
        << c.to.ToString() << "\n";
  for (const TempArena& t : arenas_) {
    out << "temp arena color " << t.color << " (allocation " << t.allocation << "): peak " << t.size
        << " bytes, live bytes lower bound " << t.lower_bound << " bytes";
    if (t.lower_bound > 0) out << ", ratio " << static_cast<double>(t.size) / static_cast<double>(t.lower_bound);
    out << "\n";
  }
  out << "temp arena: peak " << peak_temp_bytes_ << " bytes, lower bound " << temp_lower_bound_ << " bytes";
  if (temp_lower_bound_ > 0)
    out << ", ratio " << static_cast<double>(peak_temp_bytes_) / static_cast<double>(temp_lower_bound_);
  out << "\n";
  return out.str();
}

}  // namespace kiln::pipeline
