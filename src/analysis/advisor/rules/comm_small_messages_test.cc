// communication.small_messages, run alone on a hand-filled rank of two 1000 us steps: most collectives
// under 1 MB and their time above 10 % of the step fire, with the gain of sending them in 25 MB buckets.
// (communication.small_packets, the same rule file's Ascend half, is tested in comm_small_packets_test.cc.)
#include <gtest/gtest.h>

#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof::rule_test {
namespace {

constexpr int64_t kSmallBytes = 100 * 1024;
constexpr int64_t kLargeBytes = 4 * 1024 * 1024;

// `small` collectives of 100 KiB taking `small_us` each and `large` of 4 MiB taking 100 us each.
RankCommunication Collectives(int small, double small_us, int large) {
  RankCommunication comm;
  for (int i = 0; i < small + large; ++i) {
    Collective c;
    c.bytes = i < small ? kSmallBytes : kLargeBytes;
    c.duration_ns = i < small ? Us(small_us) : Us(100);
    comm.collectives.push_back(c);
  }
  return comm;
}

// The rule alone on `comm` over two steps of 1000 us.
AdvisorResult SmallMessages(const RankCommunication& comm) {
  RuleAlone alone;
  alone.rank.comm = &comm;
  return alone.Run(RuleCommSmallMessages);
}

TEST(CommSmallMessages, MostlySmallAndAboveTenPercentOfTheStep) {
  const AdvisorResult result = SmallMessages(Collectives(8, 40, 2));
  const Finding* f = Find(result, "communication.small_messages");
  ASSERT_NE(f, nullptr);
  ExpectFinding(*f, 80,
                {{"small_messages_per_step", 4},
                 {"small_message_summed_us", 160},
                 {"mean_small_message_bytes", kSmallBytes},
                 {"shortest_small_message_us", 40},
                 {"buckets_of_25MB_per_step", 1}});
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, 3 * Us(40));  // 4 messages a step in one bucket: 3 latencies saved
}

// 20 % of the collectives, though they take 20 % of the step.
TEST(CommSmallMessages, ASmallShareOfTheCollectivesIsNot) {
  EXPECT_EQ(Find(SmallMessages(Collectives(2, 200, 8)), "communication.small_messages"), nullptr);
}

TEST(CommSmallMessages, SmallMessagesTakingLittleOfTheStepAreNot) {
  EXPECT_EQ(Find(SmallMessages(Collectives(8, 5, 2)), "communication.small_messages"), nullptr);  // 2 %
}

}  // namespace
}  // namespace tuneprof::rule_test
