// PropagateTraceContext against what Debezium 3.6.1 with OpenTelemetry 1.68 wrote for the same contexts
// (DebeziumSideBySide.TheTraceContextColumnGivesDebeziumsTraceHeaders runs them through both).
#include "outbox/trace_context.h"

#include <optional>
#include <string>

#include <gtest/gtest.h>

namespace outbox::outbox {
namespace {

constexpr const char* kParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

struct Written {
  std::string traceparent, tracestate;
  bool operator==(const Written&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Written& w) {
  return os << "{traceparent " << w.traceparent << ", tracestate " << w.tracestate << "}";
}

std::optional<Written> Propagate(std::string_view traceparent, std::string_view tracestate = "") {
  Written w;
  if (!PropagateTraceContext(traceparent, tracestate, &w.traceparent, &w.tracestate)) return std::nullopt;
  return w;
}

std::string TracestateOf(std::string_view tracestate) {
  std::optional<Written> w = Propagate(kParent, tracestate);
  return w ? w->tracestate : "(no context)";
}

TEST(TraceContext, AValidParentIsWrittenAsVersion00WithItsIds) {
  EXPECT_EQ(Propagate(kParent, "congo=t61"), (Written{kParent, "congo=t61"}));
  EXPECT_EQ(Propagate(kParent), (Written{kParent, ""}));
  // Later versions are read (their extra fields after a '-') and written as 00.
  EXPECT_EQ(Propagate("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra"), (Written{kParent, ""}));
  EXPECT_EQ(Propagate("fe-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"), (Written{kParent, ""}));
}

TEST(TraceContext, OfTheFlagsTheSampledAndRandomBitsAreKept) {
  const std::string prefix = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-";
  for (const auto& [in, out] : std::vector<std::pair<std::string, std::string>>{
           {"00", "00"}, {"01", "01"}, {"02", "02"}, {"03", "03"}, {"81", "01"}, {"ff", "03"}, {"fc", "00"}}) {
    std::optional<Written> w = Propagate(prefix + in);
    ASSERT_TRUE(w.has_value()) << in;
    EXPECT_EQ(w->traceparent, prefix + out) << in;
  }
}

TEST(TraceContext, ATraceparentThePropagatorRefusesGivesNoHeaders) {
  for (const char* bad : {
           "",
           "#only a comment",
           "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",  // upper-case trace id
           "00-0af7651916cd43dd8448eb211c80319c-B7AD6B7169203331-01",  // upper-case span id
           "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0A",  // upper-case flags
           "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0g",
           "00-00000000000000000000000000000000-b7ad6b7169203331-01",  // all-zero trace id
           "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",  // all-zero span id
           "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-",  // version 00 with more
           "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",  // version ff
           "0A-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
           "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01x",  // more, not after a '-'
           "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-1",
           "00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
           "00-0af7651916cd43dd8448eb211c80319c_b7ad6b7169203331-01",
           "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331_01",
       }) {
    EXPECT_EQ(Propagate(bad, "congo=t61"), std::nullopt) << bad;
  }
}

TEST(TraceContext, TheTracestateIsWrittenWithoutOptionalWhitespaceAndEmptyMembers) {
  EXPECT_EQ(TracestateOf("congo=t61 ,\trojo=00f067aa0ba902b7"), "congo=t61,rojo=00f067aa0ba902b7");
  EXPECT_EQ(TracestateOf(" x=1 "), "x=1");
  EXPECT_EQ(TracestateOf("a=1,,b=2"), "a=1,b=2");
  EXPECT_EQ(TracestateOf("a=1,b=2,"), "a=1,b=2");
  EXPECT_EQ(TracestateOf(", \t,"), "");
  EXPECT_EQ(TracestateOf("a=two words"), "a=two words");
  EXPECT_EQ(TracestateOf("t@v=6,0t@vendor_-*/9=x,a-_*/9=~!"), "t@v=6,0t@vendor_-*/9=x,a-_*/9=~!");
}

TEST(TraceContext, ATracestateWithAnyInvalidMemberIsDroppedWhole) {
  for (const char* bad : {
           "bad state",               // no '='
           "a=1,b=2,a=3",             // a key twice
           "a=1,Bad=4",               // an upper-case key
           "a=1,0abc=4",              // a simple key starting with a digit
           "a=1,d=",                  // an empty value
           "a=1,c=x=y",               // '=' in a value
           "a=1,=x",                  // an empty key
           "a=caf\xc3\xa9",           // beyond ASCII
           "a=b\x01",                 // a control character
           "t@=1", "t@a@b=1", "t@vendor-is-too-long=1",
       }) {
    EXPECT_EQ(TracestateOf(bad), "") << bad;
  }
  std::string members;
  for (int i = 0; i < 32; ++i) members += (i ? ",k" : "k") + std::to_string(i) + "=v";
  EXPECT_EQ(TracestateOf(members), members);  // 32 members are allowed
  EXPECT_EQ(TracestateOf(members + ",k32=v"), "");
  EXPECT_EQ(TracestateOf("a=" + std::string(256, 'x')), "a=" + std::string(256, 'x'));
  EXPECT_EQ(TracestateOf("a=" + std::string(257, 'x')), "");
  EXPECT_EQ(TracestateOf(std::string(241, 't') + "@v=1"), std::string(241, 't') + "@v=1");
  EXPECT_EQ(TracestateOf(std::string(242, 't') + "@v=1"), "");
  EXPECT_EQ(TracestateOf("t@" + std::string(14, 'v') + "=1"), "t@" + std::string(14, 'v') + "=1");
}

}  // namespace
}  // namespace outbox::outbox
