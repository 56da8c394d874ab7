// BufferAssignment::ToString: a human-readable listing of allocations, the
// buffers each holds (offset, size, live range) and the arena's efficiency.
#include <algorithm>
#include <sstream>
#include <vector>

#include "compiler/pipeline/buffer_assignment.h"

namespace kiln::pipeline {

std::string BufferAssignment::ToString() const {
  std::vector<std::vector<int64_t>> by_allocation(allocations_.size());
  for (const LogicalBuffer& b : points_to_.buffers()) by_allocation[placements_[b.id].slice.allocation].push_back(b.id);
  std::ostringstream out;
  out << "BufferAssignment for " << (schedule_.computation ? schedule_.computation->name() : "?") << ": "
      << allocations_.size() << " allocations, " << points_to_.buffers().size() << " buffers\n";
  for (size_t a = 0; a < allocations_.size(); ++a) {
    out << "allocation " << a << ": " << allocations_[a].ToString()
        << (static_cast<int32_t>(a) == temp_allocation_ ? " (temp arena)" : "") << "\n";
    auto& ids = by_allocation[a];
    std::sort(ids.begin(), ids.end(), [&](int64_t x, int64_t y) {
      return std::make_pair(placements_[x].slice.offset, x) < std::make_pair(placements_[y].slice.offset, y);
    });
    for (int64_t id : ids) {
      const LogicalBuffer& b = points_to_.buffer(id);
      const BufferPlacement& p = placements_[id];
      out << "  " << b.defining->name() << ShapeIndexToString(b.index) << " "
          << SubShape(b.defining->shape(), b.index)->ToString(false) << " at " << p.slice.ToString() << " live ["
          << p.live_start << ", " << p.live_end << "]\n";
    }
  }
  out << "temp arena: peak " << peak_temp_bytes_ << " bytes, lower bound " << temp_lower_bound_ << " bytes";
  if (temp_lower_bound_ > 0)
    out << ", ratio " << static_cast<double>(peak_temp_bytes_) / static_cast<double>(temp_lower_bound_);
  out << "\n";
  return out.str();
}

}  // namespace kiln::pipeline
