// Lsn parsing and printing.
#include "common/lsn.h"

#include <gtest/gtest.h>

namespace outbox {
namespace {

TEST(Lsn, PrintsAsPgLsnDoes) {
  EXPECT_EQ(Lsn(0).ToString(), "0/0");
  EXPECT_EQ(Lsn(0x16B374D848ULL).ToString(), "16/B374D848");
}

TEST(Lsn, ParsesWhatItPrints) {
  for (uint64_t v : {0ULL, 1ULL, 0xFFFFFFFFULL, 0x100000000ULL, 0xFFFFFFFFFFFFFFFFULL}) {
    auto parsed = Lsn::Parse(Lsn(v).ToString());
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed->value(), v);
  }
  EXPECT_EQ(Lsn::Parse("16/b374d848")->value(), 0x16B374D848ULL);
}

TEST(Lsn, RejectsMalformedText) {
  for (const char* bad : {"", "/", "1/", "/1", "12", "1/2/3", "G/1", "123456789/0", "1 /2"}) {
    EXPECT_FALSE(Lsn::Parse(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace outbox
