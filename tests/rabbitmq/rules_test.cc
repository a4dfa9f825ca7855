// The RabbitMQ sink's pure rules without a broker: templates, the checks before publishing, the close-code and
// client-status classification, and the confirm bookkeeping (acks, multiple, nacks, returns matched to the confirm
// that follows them).
#include "rabbitmq/rules.h"

#include <amqp.h>
#include <amqp_framing.h>
#include <openssl/err.h>
#include <openssl/sslerr.h>
#include <gtest/gtest.h>

#include <string>

#include "sinks/key_gate.h"

namespace outbox::rabbitmq {
namespace {

using sinks::Outcome;

TEST(ExpandTemplate, ReplacesRoutedByValueAndTopic) {
  EXPECT_EQ(ExpandTemplate("orders.${routedByValue}", "outbox.event.Order", "Order"), "orders.Order");
  EXPECT_EQ(ExpandTemplate("${topic}", "outbox.event.Order", "Order"), "outbox.event.Order");
  EXPECT_EQ(ExpandTemplate("${routedByValue}-${routedByValue}.${topic}", "t", "v"), "v-v.t");
  EXPECT_EQ(ExpandTemplate("plain", "t", "v"), "plain");
  EXPECT_EQ(ExpandTemplate("${other}", "t", "v"), "${other}");
}

TEST(CheckDestination, ExchangeNamesAndRoutingKeysAsAmqpCarriesThem) {
  EXPECT_TRUE(CheckDestination("outbox.events", "a.b.c").ok());
  EXPECT_TRUE(CheckDestination("", "queue-name").ok());  // the default exchange
  EXPECT_FALSE(CheckDestination("has space", "k").ok());
  EXPECT_FALSE(CheckDestination(std::string(256, 'e'), "k").ok());
  EXPECT_FALSE(CheckDestination("e", std::string(256, 'k')).ok());
  EXPECT_TRUE(CheckDestination("e", std::string(255, 'k')).ok());
  Record r;
  const std::string long_name(256, 'h');
  r.headers = {{"id", "1"}};
  EXPECT_TRUE(CheckHeaders(r).ok());
  r.headers.push_back({long_name, "x"});
  EXPECT_FALSE(CheckHeaders(r).ok());
}

TEST(Classify, ChannelAndConnectionCloses) {
  EXPECT_EQ(ClassifyChannelClose(AMQP_NOT_FOUND), CloseAction::kRecheckExchanges);
  EXPECT_EQ(ClassifyChannelClose(AMQP_ACCESS_REFUSED), CloseAction::kFatal);
  EXPECT_EQ(ClassifyChannelClose(AMQP_PRECONDITION_FAILED), CloseAction::kFatal);
  EXPECT_EQ(ClassifyChannelClose(AMQP_INTERNAL_ERROR), CloseAction::kReconnect);
  EXPECT_EQ(ClassifyConnectionClose(AMQP_CONNECTION_FORCED), CloseAction::kReconnect);
  EXPECT_EQ(ClassifyConnectionClose(AMQP_ACCESS_REFUSED), CloseAction::kFatal);
  EXPECT_EQ(ClassifyConnectionClose(AMQP_NOT_ALLOWED), CloseAction::kFatal);
  EXPECT_EQ(ClassifyClientStatus(AMQP_STATUS_SOCKET_ERROR), Outcome::kRetriable);
  EXPECT_EQ(ClassifyClientStatus(AMQP_STATUS_CONNECTION_CLOSED), Outcome::kRetriable);
  EXPECT_EQ(ClassifyClientStatus(AMQP_STATUS_HEARTBEAT_TIMEOUT), Outcome::kRetriable);
  EXPECT_EQ(ClassifyClientStatus(AMQP_STATUS_SSL_PEER_VERIFY_FAILED), Outcome::kFatal);
  EXPECT_EQ(ClassifyClientStatus(AMQP_STATUS_BAD_URL), Outcome::kFatal);
}

TEST(Classify, TlsFailuresAreTypedByOpenSslsErrorCode) {
  EXPECT_EQ(ClassifyTlsError(ERR_LIB_SSL, SSL_R_CERTIFICATE_VERIFY_FAILED), TlsFailure::kServerCertificate);
  EXPECT_EQ(ClassifyTlsError(ERR_LIB_SSL, SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED), TlsFailure::kClientCertificate);
  EXPECT_EQ(ClassifyTlsError(ERR_LIB_SSL, SSL_R_TLSV1_ALERT_UNKNOWN_CA), TlsFailure::kClientCertificate);
  EXPECT_EQ(ClassifyTlsError(ERR_LIB_SSL, SSL_R_WRONG_VERSION_NUMBER), TlsFailure::kProtocol);
  // A broken connection, or no OpenSSL error at all: retried.
  EXPECT_EQ(ClassifyTlsError(ERR_LIB_SSL, SSL_R_UNEXPECTED_EOF_WHILE_READING), TlsFailure::kTransient);
  EXPECT_EQ(ClassifyTlsError(0, 0), TlsFailure::kTransient);
  EXPECT_EQ(ClassifyTlsError(ERR_LIB_SYS, SSL_R_CERTIFICATE_VERIFY_FAILED), TlsFailure::kTransient);
}

TEST(ConfirmTracker, SingleAndMultipleAcks) {
  ConfirmTracker t;
  for (uint64_t tag = 1; tag <= 4; ++tag) t.Published(tag, 100 + tag, "ex", "rk", "id" + std::to_string(tag));
  auto one = t.Confirmed(2, false, true);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].seq, 102u);
  EXPECT_EQ(one[0].outcome, Outcome::kAcked);
  auto upto = t.Confirmed(3, true, true);  // 1 and 3 (2 is settled)
  ASSERT_EQ(upto.size(), 2u);
  EXPECT_EQ(upto[0].seq, 101u);
  EXPECT_EQ(upto[1].seq, 103u);
  EXPECT_EQ(t.size(), 1u);
  EXPECT_TRUE(t.Confirmed(3, false, true).empty()) << "a tag confirmed twice settles nothing";
}

TEST(ConfirmTracker, NackRewindsEveryCoveredRecord) {
  ConfirmTracker t;
  for (uint64_t tag = 1; tag <= 3; ++tag) t.Published(tag, tag, "ex", "rk", "id");
  auto nacked = t.Confirmed(2, true, false);
  ASSERT_EQ(nacked.size(), 2u);
  for (const Settled& s : nacked) EXPECT_EQ(s.outcome, Outcome::kRetriable);
  auto rest = t.FailAll("connection lost");
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].seq, 3u);
  EXPECT_EQ(rest[0].outcome, Outcome::kRetriable);
  EXPECT_EQ(t.size(), 0u);
}

TEST(ConfirmTracker, AReturnRejectsTheMatchingRecordOfTheConfirmThatFollows) {
  ConfirmTracker t;
  t.Published(1, 11, "ex", "orders.a", "e1");
  t.Published(2, 12, "ex", "orders.b", "e2");  // unroutable
  t.Published(3, 13, "ex", "orders.a", "e3");
  t.Returned(AMQP_NO_ROUTE, "NO_ROUTE", "ex", "orders.b", "e2");
  auto s = t.Confirmed(3, true, true);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].outcome, Outcome::kAcked);
  EXPECT_EQ(s[1].outcome, Outcome::kRejectedEvent);
  EXPECT_EQ(s[1].reason, sinks::Reason::kTopic);
  EXPECT_NE(s[1].error.find("orders.b"), std::string::npos) << s[1].error;
  EXPECT_EQ(s[2].outcome, Outcome::kAcked);
  // The return was used up by that confirm: the next one acks.
  t.Published(4, 14, "ex", "orders.b", "e2");
  auto next = t.Confirmed(4, false, true);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].outcome, Outcome::kAcked);
}

TEST(ConfirmTracker, ReturnsOfTheSameEventTwiceRejectBothAndAReturnMatchingNothingHalts) {
  ConfirmTracker t;
  t.Published(1, 1, "ex", "k", "same");
  t.Published(2, 2, "ex", "k", "same");
  t.Returned(AMQP_NO_ROUTE, "NO_ROUTE", "ex", "k", "same");
  t.Returned(AMQP_NO_ROUTE, "NO_ROUTE", "ex", "k", "same");
  auto s = t.Confirmed(2, true, true);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].outcome, Outcome::kRejectedEvent);
  EXPECT_EQ(s[1].outcome, Outcome::kRejectedEvent);
  t.Published(3, 3, "ex", "k", "x");
  t.Returned(AMQP_NO_ROUTE, "NO_ROUTE", "ex", "other", "y");
  auto odd = t.Confirmed(3, false, true);
  ASSERT_EQ(odd.size(), 1u);
  EXPECT_EQ(odd[0].outcome, Outcome::kRejectedBatch) << "never ack a record that may have been the returned one";
}

TEST(KeyGate, OneUnconfirmedRecordPerKeyAndTopic) {
  sinks::KeyGate gate;
  std::string a, b, c, n;
  EXPECT_TRUE(gate.TryAcquire("t", std::optional<std::string_view>("k"), &a));
  EXPECT_FALSE(gate.TryAcquire("t", std::optional<std::string_view>("k"), &b));
  EXPECT_TRUE(gate.TryAcquire("u", std::optional<std::string_view>("k"), &c));
  EXPECT_TRUE(gate.TryAcquire("t", std::nullopt, &n));
  gate.Release(a);
  EXPECT_TRUE(gate.TryAcquire("t", std::optional<std::string_view>("k"), &b));
}

}  // namespace
}  // namespace outbox::rabbitmq
