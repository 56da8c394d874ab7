// Heap simulation on hand-packed request sets.
#include "compiler/pipeline/heap_simulator.h"

#include <gtest/gtest.h>

namespace kiln::pipeline {
namespace {

TEST(HeapSimulator, AlignUp) {
  EXPECT_EQ(AlignUp(0, 64), 0);
  EXPECT_EQ(AlignUp(1, 64), 64);
  EXPECT_EQ(AlignUp(64, 64), 64);
  EXPECT_EQ(AlignUp(100, 64), 128);
}

// Sizes (aligned): A 100 (128) [0,1], B 64 [0,5], C 128 [2,3].
// Placement, largest raw size first: C at 0; A does not meet C in time, so
// A also at 0; B meets both, which cover [0,128), so B at 128. Arena 192.
// Live bytes: position 0 A+B = 192, position 2 B+C = 192 -> bound 192.
TEST(HeapSimulator, ReusesBytesOfDisjointIntervals) {
  HeapResult r = SimulateHeap({{100, 0, 1}, {64, 0, 5}, {128, 2, 3}}, 64);
  ASSERT_EQ(r.offsets.size(), 3u);
  EXPECT_EQ(r.offsets[0], 0);
  EXPECT_EQ(r.offsets[1], 128);
  EXPECT_EQ(r.offsets[2], 0);
  EXPECT_EQ(r.arena_size, 192);
  EXPECT_EQ(r.lower_bound, 192);
}

// Intervals are closed: [0,2] and [2,4] meet at 2 and must not share bytes.
TEST(HeapSimulator, TouchingIntervalsDoNotShare) {
  HeapResult r = SimulateHeap({{64, 0, 2}, {64, 2, 4}}, 64);
  EXPECT_NE(r.offsets[0], r.offsets[1]);
  EXPECT_EQ(r.arena_size, 128);
  EXPECT_EQ(r.lower_bound, 128);
}

// Best fit over first fit. Order (size desc, then start): A 256 [0,0] at
// 0; P 64 [0,5] at 256; Q 64 [0,0] at 320; R 64 [0,5] at 384. W 64 [1,1]
// meets only P [256,320) and R [384,448): gaps [0,256) (256 bytes) and
// [320,384) (64 bytes). Best fit takes the 64-byte gap, 320; first fit
// would take 0. Arena 448; bound at position 0 = 256 + 3 * 64 = 448.
TEST(HeapSimulator, BestFitGap) {
  HeapResult r = SimulateHeap({{256, 0, 0}, {64, 0, 5}, {64, 0, 0}, {64, 0, 5}, {64, 1, 1}}, 64);
  ASSERT_EQ(r.offsets.size(), 5u);
  EXPECT_EQ(r.offsets[0], 0);
  EXPECT_EQ(r.offsets[1], 256);
  EXPECT_EQ(r.offsets[2], 320);
  EXPECT_EQ(r.offsets[3], 384);
  EXPECT_EQ(r.offsets[4], 320);
  EXPECT_EQ(r.arena_size, 448);
  EXPECT_EQ(r.lower_bound, 448);
}

TEST(HeapSimulator, EmptyRequestsTakeNoSpace) {
  HeapResult r = SimulateHeap({{0, 0, 3}, {8, 1, 2}}, 64);
  EXPECT_EQ(r.offsets[0], 0);
  EXPECT_EQ(r.offsets[1], 0);
  EXPECT_EQ(r.arena_size, 64);
  EXPECT_EQ(r.lower_bound, 64);
  EXPECT_EQ(SimulateHeap({}, 64).arena_size, 0);
}

}  // namespace
}  // namespace kiln::pipeline
