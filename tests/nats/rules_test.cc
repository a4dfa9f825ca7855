// The NATS sink's pure rules: the outcome of every client status, subject matching, the size as the server counts
// it, headers the protocol cannot carry, and the per-key in-flight rule.
#include "nats/rules.h"

#include <gtest/gtest.h>
#include <nats/status.h>

#include <string>

namespace outbox::nats {
namespace {

using sinks::Outcome;

TEST(ClassifyPublishResult, AckedOnlyWithoutAnError) {
  EXPECT_EQ(ClassifyPublishResult(NATS_OK, 0), Outcome::kAcked);
  EXPECT_NE(ClassifyPublishResult(NATS_OK, JSStreamStoreFailedErr), Outcome::kAcked);
}

TEST(ClassifyPublishResult, ConnectionLossTimeoutsAndAnUnavailableStreamAreRetriable) {
  for (int s : {NATS_IO_ERROR, NATS_CONNECTION_CLOSED, NATS_NO_SERVER, NATS_STALE_CONNECTION,
                NATS_CONNECTION_DISCONNECTED, NATS_TIMEOUT, NATS_NOT_YET_CONNECTED, NATS_DRAINING, NATS_NO_RESPONDERS}) {
    EXPECT_EQ(ClassifyPublishResult(s, 0), Outcome::kRetriable) << s;
  }
}

TEST(ClassifyPublishResult, OutOfResourcesIsRetriable) {
  for (int code : {JSInsufficientResourcesErr, JSStorageResourcesExceededErr, JSMemoryResourcesExceededErr,
                   JSAccountResourcesExceededErr, JSClusterNotAvailErr, JSClusterNotLeaderErr, JSStreamStoreFailedErr,
                   JSStreamNotFoundErr}) {
    EXPECT_EQ(ClassifyPublishResult(NATS_ERR, code), Outcome::kRetriable) << code;
  }
}

TEST(ClassifyPublishResult, AuthorizationAndTlsAreFatal) {
  for (int s : {NATS_CONNECTION_AUTH_FAILED, NATS_NOT_PERMITTED, NATS_SSL_ERROR, NATS_SECURE_CONNECTION_REQUIRED,
                NATS_SECURE_CONNECTION_WANTED}) {
    EXPECT_EQ(ClassifyPublishResult(s, 0), Outcome::kFatal) << s;
  }
  EXPECT_EQ(ClassifyPublishResult(NATS_ERR, JSNotEnabledForAccountErr), Outcome::kFatal);
  EXPECT_EQ(ClassifyPublishResult(NATS_ERR, JSStreamSealedErr), Outcome::kFatal);
}

TEST(ClassifyPublishResult, OneMessageRefusedForGoodIsThatEventsError) {
  EXPECT_EQ(ClassifyPublishResult(NATS_MAX_PAYLOAD, 0), Outcome::kRejectedEvent);
  EXPECT_EQ(RejectionReason(NATS_MAX_PAYLOAD, 0), sinks::Reason::kTooLarge);
  EXPECT_EQ(ClassifyPublishResult(NATS_ERR, JSStreamMessageExceedsMaximumErr), Outcome::kRejectedEvent);
  EXPECT_EQ(RejectionReason(NATS_ERR, JSStreamMessageExceedsMaximumErr), sinks::Reason::kTooLarge);
  EXPECT_EQ(ClassifyPublishResult(NATS_INVALID_SUBJECT, 0), Outcome::kRejectedEvent);
  EXPECT_EQ(RejectionReason(NATS_INVALID_SUBJECT, 0), sinks::Reason::kTopic);
}

TEST(ClassifyPublishResult, AnUnknownErrorHaltsRatherThanLoops) {
  EXPECT_EQ(ClassifyPublishResult(NATS_ERR, 0), Outcome::kRejectedBatch);
  EXPECT_EQ(ClassifyPublishResult(NATS_ERR, 99999), Outcome::kRejectedBatch);
  EXPECT_EQ(ClassifyPublishResult(NATS_PROTOCOL_ERROR, 0), Outcome::kRejectedBatch);
  EXPECT_EQ(ClassifyPublishResult(12345, 0), Outcome::kRejectedBatch);
}

TEST(ClassifyPublishResult, EveryStatusHasAnOutcome) {
  // Nothing from NATS_OK to the last status crashes or reads as acked.
  for (int s = NATS_ERR; s <= NATS_MISSED_HEARTBEAT; ++s) EXPECT_NE(ClassifyPublishResult(s, 0), Outcome::kAcked) << s;
}

TEST(SubjectMatches, Wildcards) {
  EXPECT_TRUE(SubjectMatches("orders.>", "orders.created"));
  EXPECT_TRUE(SubjectMatches("orders.>", "orders.a.b"));
  EXPECT_FALSE(SubjectMatches("orders.>", "orders"));
  EXPECT_TRUE(SubjectMatches("orders.*", "orders.created"));
  EXPECT_FALSE(SubjectMatches("orders.*", "orders.a.b"));
  EXPECT_TRUE(SubjectMatches("*.created", "orders.created"));
  EXPECT_TRUE(SubjectMatches("orders.created", "orders.created"));
  EXPECT_FALSE(SubjectMatches("orders.created", "orders.createdx"));
  EXPECT_FALSE(SubjectMatches("orders.created", "orders"));
  EXPECT_FALSE(SubjectMatches("orders", "orders.created"));
  EXPECT_TRUE(SubjectMatches(">", "a"));
}

TEST(IsPublishableSubject, NoWildcardsNoEmptyTokensNoSpaces) {
  EXPECT_TRUE(IsPublishableSubject("outbox.event.created"));
  EXPECT_FALSE(IsPublishableSubject(""));
  EXPECT_FALSE(IsPublishableSubject("a..b"));
  EXPECT_FALSE(IsPublishableSubject(".a"));
  EXPECT_FALSE(IsPublishableSubject("a."));
  EXPECT_FALSE(IsPublishableSubject("a.*"));
  EXPECT_FALSE(IsPublishableSubject("a.>"));
  EXPECT_FALSE(IsPublishableSubject("a b"));
}

TEST(MessageBytes, HeaderBlockAndPayload) {
  Record r;
  r.topic = "a.b";
  r.event_id = "id1";
  r.key = "k";
  r.value = "12345";
  r.headers = {{"id", "id1"}, {"source_lsn", "0/1"}};
  // NATS/1.0\r\n + Nats-Msg-Id: id1\r\n + key: k\r\n + id: id1\r\n + source_lsn: 0/1\r\n + \r\n + payload
  const size_t expected = 10 + (11 + 4 + 3) + (3 + 4 + 1) + (2 + 4 + 3) + (10 + 4 + 3) + 2 + 5;
  EXPECT_EQ(MessageBytes(r), expected);
  r.key.reset();
  r.value.reset();
  EXPECT_EQ(MessageBytes(r), expected - 8 - 5);
}

TEST(CheckHeaders, LineBreaksAndNulsAreRefused) {
  Record r;
  r.headers = {{"id", "1"}};
  EXPECT_TRUE(CheckHeaders(r).ok());
  r.headers = {{"tenant", std::string_view("a\r\nb")}};
  EXPECT_FALSE(CheckHeaders(r).ok());
  r.headers = {{"bad name", "x"}};
  EXPECT_FALSE(CheckHeaders(r).ok());
  r.headers = {};
  r.key = std::string_view("a\0b", 3);
  EXPECT_FALSE(CheckHeaders(r).ok());
}

TEST(KeyGate, OneUnacknowledgedRecordPerKeyAndSubject) {
  KeyGate gate;
  std::string first, second, other_key, other_subject, null_key;
  ASSERT_TRUE(gate.TryAcquire("a.b", std::string_view("k1"), &first));
  EXPECT_FALSE(gate.TryAcquire("a.b", std::string_view("k1"), &second)) << "the second record of k1 must wait";
  EXPECT_TRUE(second.empty());
  EXPECT_TRUE(gate.TryAcquire("a.b", std::string_view("k2"), &other_key));
  EXPECT_TRUE(gate.TryAcquire("a.c", std::string_view("k1"), &other_subject)) << "order holds per key within a subject";
  EXPECT_TRUE(gate.TryAcquire("a.b", std::nullopt, &null_key));
  EXPECT_TRUE(gate.TryAcquire("a.b", std::nullopt, &null_key)) << "null keys are not gated";
  gate.Release(first);
  EXPECT_TRUE(gate.TryAcquire("a.b", std::string_view("k1"), &second)) << "acked: the next record of k1 may go";
  gate.Clear();
  EXPECT_EQ(gate.size(), 0u);
}

TEST(KeyGate, SubjectAndKeyDoNotRunTogether) {
  KeyGate gate;
  std::string a, b;
  ASSERT_TRUE(gate.TryAcquire("a.b", std::string_view("c"), &a));
  EXPECT_TRUE(gate.TryAcquire("a", std::string_view("b.c"), &b));
}

}  // namespace
}  // namespace outbox::nats
