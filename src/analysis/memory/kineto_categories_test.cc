#include "analysis/memory/kineto_categories.h"

#include <gtest/gtest.h>

namespace tuneprof {
namespace {

MemoryEventContext In(MemoryPhase phase, int64_t outer_op_end_ns = kNoId, int64_t phase_end_ns = kNoId) {
  MemoryEventContext c;
  c.phase = phase;
  c.outer_op_end_ns = outer_op_end_ns;
  c.phase_end_ns = phase_end_ns;
  return c;
}

const MemoryEventContext kOutside = In(MemoryPhase::kOther);
const MemoryEventContext kBackward = In(MemoryPhase::kBackward, 500);

TEST(KinetoCategories, FreedWithinItsOuterOpIsTemporary) {
  EXPECT_EQ(CategoryOfBlock(In(MemoryPhase::kOther, 200), &kOutside, 100, 150, kNoId), MemoryCategory::kTemporaries);
  EXPECT_EQ(CategoryOfBlock(In(MemoryPhase::kBackward, 200), &kBackward, 100, 200, kNoId),
            MemoryCategory::kTemporaries);
}

TEST(KinetoCategories, OptimizerBlocksOutlivingTheStepAreState) {
  const MemoryEventContext step = In(MemoryPhase::kOptimizer, 120, 1000);
  EXPECT_EQ(CategoryOfBlock(step, nullptr, 100, kNoId, 0), MemoryCategory::kOptimizerState);
  EXPECT_EQ(CategoryOfBlock(step, &kOutside, 100, 5000, 0), MemoryCategory::kOptimizerState);
  EXPECT_EQ(CategoryOfBlock(step, &kOutside, 100, 900, 0), MemoryCategory::kTemporaries);
}

TEST(KinetoCategories, BackwardBlocksAreGradientsOrAutogradDetail) {
  EXPECT_EQ(CategoryOfBlock(kBackward, &kBackward, 100, 600, 0), MemoryCategory::kAutogradDetail);
  EXPECT_EQ(CategoryOfBlock(kBackward, &kOutside, 100, 600, 0), MemoryCategory::kGradients);
  EXPECT_EQ(CategoryOfBlock(kBackward, nullptr, 100, kNoId, 0), MemoryCategory::kGradients);
}

TEST(KinetoCategories, ForwardBlocksFreedInBackwardAreActivations) {
  EXPECT_EQ(CategoryOfBlock(In(MemoryPhase::kOther, 150), &kBackward, 100, 600, 0), MemoryCategory::kActivations);
  EXPECT_EQ(CategoryOfBlock(In(MemoryPhase::kOther, 150), &kOutside, 100, 600, 0), MemoryCategory::kUnknown);
}

TEST(KinetoCategories, NeverFreedBeforeTheFirstStepAreParameters) {
  EXPECT_EQ(CategoryOfBlock(kOutside, nullptr, 100, kNoId, 1000), MemoryCategory::kParameters);
  EXPECT_EQ(CategoryOfBlock(kOutside, nullptr, 2000, kNoId, 1000), MemoryCategory::kUnknown);
  EXPECT_EQ(CategoryOfBlock(kOutside, nullptr, 100, kNoId, kNoId), MemoryCategory::kUnknown);
}

}  // namespace
}  // namespace tuneprof
