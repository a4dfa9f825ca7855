// The HTTP sink's pure rules: the verdict of a request's result, the URL template, the header checks, the backoff
// and the Dispatcher's per-key order on an injected clock. No server.
#include "http/rules.h"

#include <curl/curl.h>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

#include "nlohmann/json.hpp"

namespace outbox::http {
namespace {

using std::chrono::milliseconds;
using Clock = Dispatcher::Clock;

TEST(HttpClassify, TwoHundredsAckRetriablesRetryOtherAnswersReject) {
  EXPECT_EQ(Classify(CURLE_OK, 200), Verdict::kAck);
  EXPECT_EQ(Classify(CURLE_OK, 201), Verdict::kAck);
  EXPECT_EQ(Classify(CURLE_OK, 204), Verdict::kAck);
  for (long status : {408L, 429L, 500L, 502L, 503L, 504L, 599L}) {
    EXPECT_EQ(Classify(CURLE_OK, status), Verdict::kRetry) << status;
  }
  for (long status : {400L, 401L, 403L, 404L, 409L, 413L, 422L, 301L, 302L}) {
    EXPECT_EQ(Classify(CURLE_OK, status), Verdict::kReject) << status;
  }
}

TEST(HttpClassify, NoAnswerRetriesAndAConfigurationThatCannotWorkIsFatal) {
  for (CURLcode c : {CURLE_COULDNT_CONNECT, CURLE_OPERATION_TIMEDOUT, CURLE_GOT_NOTHING, CURLE_RECV_ERROR,
                     CURLE_SEND_ERROR, CURLE_COULDNT_RESOLVE_HOST, CURLE_SSL_CONNECT_ERROR}) {
    EXPECT_EQ(Classify(c, 0), Verdict::kRetry) << "CURLcode " << static_cast<int>(c);
  }
  for (CURLcode c : {CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM,
                     CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL}) {
    EXPECT_EQ(Classify(c, 0), Verdict::kFatal) << "CURLcode " << static_cast<int>(c);
  }
}

TEST(HttpUrlTemplate, RoutedByValueComesBackFromTheTopicAndIsEncoded) {
  const UrlTemplate t("http://h:1/events/${routedByValue}?topic=${topic}", "outbox.event.${routedByValue}");
  EXPECT_EQ(t.For("outbox.event.order_created"), "http://h:1/events/order_created?topic=outbox.event.order_created");
  // A topic the template did not make (the dead-letter topic) stands for itself.
  EXPECT_EQ(t.For("outbox.dead_letter"), "http://h:1/events/outbox.dead_letter?topic=outbox.dead_letter");
  EXPECT_EQ(t.RoutedByValue("outbox.event."), "outbox.event.");  // an empty value cannot be a routed value
  const UrlTemplate plain("https://h/in", "fixed");
  EXPECT_EQ(plain.For("fixed"), "https://h/in");
  EXPECT_EQ(PercentEncode("a b/c~d"), "a%20b%2Fc~d");
}

TEST(HttpUrlTemplate, OriginIsSchemeHostAndPort) {
  EXPECT_EQ(Origin("https://example.com:8443/a/b?c"), "https://example.com:8443/");
  EXPECT_EQ(Origin("http://h"), "http://h/");
  EXPECT_EQ(Origin("nope"), "");
}

TEST(HttpHeaders, LineBreaksAndIllegalNamesAreRefusedByName) {
  Record r;
  r.headers = {{"id", "1"}, {"source_lsn", "0/1"}, {"x", std::nullopt}};
  EXPECT_TRUE(CheckHeaders(r).ok());
  r.headers.push_back({"bad name", "v"});
  EXPECT_NE(CheckHeaders(r).message().find("bad name"), std::string::npos);
  r.headers.back() = {"evil", "a\r\nX-Injected: 1"};
  EXPECT_NE(CheckHeaders(r).message().find("evil"), std::string::npos);
  r.headers.pop_back();
  r.key = std::string_view("k\n");
  EXPECT_FALSE(CheckHeaders(r).ok());
}

TEST(HttpBackoff, DoublesUpToTheCapAndRetryAfterReplacesIt) {
  const BackoffPolicy p{milliseconds(100), milliseconds(1000), milliseconds(5000)};
  EXPECT_EQ(BackoffFor(p, 1, std::nullopt), milliseconds(100));
  EXPECT_EQ(BackoffFor(p, 2, std::nullopt), milliseconds(200));
  EXPECT_EQ(BackoffFor(p, 4, std::nullopt), milliseconds(800));
  EXPECT_EQ(BackoffFor(p, 5, std::nullopt), milliseconds(1000));
  EXPECT_EQ(BackoffFor(p, 1000, std::nullopt), milliseconds(1000));
  EXPECT_EQ(BackoffFor(p, 1, milliseconds(3000)), milliseconds(3000));
  EXPECT_EQ(BackoffFor(p, 1, milliseconds(60000)), milliseconds(5000));
}

TEST(HttpDispatcher, AKeysNextEventWaitsForTheAckOfItsPrevious) {
  Dispatcher d({milliseconds(100), milliseconds(1000), milliseconds(5000)}, 10);
  const Clock::time_point t0{};
  d.Add(1, "a");
  d.Add(2, "a");
  d.Add(3, "b");
  d.Add(4, std::nullopt);
  d.Add(5, std::nullopt);
  EXPECT_EQ(d.TakeReady(t0), (std::vector<uint64_t>{1, 3, 4, 5}));
  EXPECT_TRUE(d.TakeReady(t0).empty()) << "2 waits for 1";
  d.Done(1);
  EXPECT_EQ(d.TakeReady(t0), (std::vector<uint64_t>{2}));
  EXPECT_EQ(d.in_flight(), 4u);
}

TEST(HttpDispatcher, ARetriedEventKeepsItsKeysLaterEventsWaitingWhileOtherKeysGoOn) {
  Dispatcher d({milliseconds(100), milliseconds(1000), milliseconds(5000)}, 10);
  const Clock::time_point t0{};
  d.Add(1, "a");
  d.Add(2, "a");
  d.Add(3, "b");
  ASSERT_EQ(d.TakeReady(t0), (std::vector<uint64_t>{1, 3}));
  EXPECT_EQ(d.Retry(1, t0, std::nullopt), milliseconds(100));
  EXPECT_EQ(d.retrying(), 1u);
  d.Done(3);
  d.Add(4, "b");
  EXPECT_EQ(d.TakeReady(t0 + milliseconds(50)), (std::vector<uint64_t>{4})) << "b goes on, a waits its backoff";
  EXPECT_EQ(d.NextDue(), t0 + milliseconds(100));
  EXPECT_EQ(d.TakeReady(t0 + milliseconds(100)), (std::vector<uint64_t>{1})) << "the same event, not 2";
  EXPECT_EQ(d.Retry(1, t0 + milliseconds(100), milliseconds(2000)), milliseconds(2000)) << "Retry-After wins";
  EXPECT_TRUE(d.TakeReady(t0 + milliseconds(1999)).empty());
  EXPECT_EQ(d.TakeReady(t0 + milliseconds(2100)), (std::vector<uint64_t>{1}));
  d.Done(1);
  EXPECT_EQ(d.retrying(), 0u);
  EXPECT_EQ(d.TakeReady(t0 + milliseconds(2100)), (std::vector<uint64_t>{2}));
}

TEST(HttpDispatcher, AtMostMaxInFlightAtOnce) {
  Dispatcher d({}, 2);
  const Clock::time_point t0{};
  for (uint64_t s = 1; s <= 5; ++s) d.Add(s, std::to_string(s));
  EXPECT_EQ(d.TakeReady(t0), (std::vector<uint64_t>{1, 2}));
  d.Done(2);
  EXPECT_EQ(d.TakeReady(t0), (std::vector<uint64_t>{3}));
  d.Done(1);
  EXPECT_EQ(d.TakeReady(t0, 0), (std::vector<uint64_t>{})) << "the caller's limit (free requests) binds too";
  EXPECT_EQ(d.TakeReady(t0, 1), (std::vector<uint64_t>{4}));
  EXPECT_EQ(d.Clear(), (std::vector<uint64_t>{3, 4, 5}));
  EXPECT_EQ(d.size(), 0u);
  EXPECT_EQ(d.in_flight(), 0u);
}

// Random answers (ack or retry) over many keys: every event is acknowledged exactly once, and per key the acks
// come in the order the events were added.
TEST(HttpDispatcher, RandomRetriesNeverReorderAKey) {
  std::mt19937 rng(7);
  Dispatcher d({milliseconds(1), milliseconds(8), milliseconds(8)}, 4);
  Clock::time_point now{};
  std::map<uint64_t, std::string> key_of;
  std::map<std::string, std::vector<uint64_t>> added, acked;
  for (uint64_t s = 1; s <= 500; ++s) {
    const std::string key = "k" + std::to_string(rng() % 7);
    d.Add(s, key);
    key_of[s] = key;
    added[key].push_back(s);
  }
  std::vector<uint64_t> out;
  for (int round = 0; round < 100000 && d.size() > 0; ++round) {
    for (uint64_t s : d.TakeReady(now)) out.push_back(s);
    if (!out.empty()) {
      const size_t i = rng() % out.size();
      const uint64_t s = out[i];
      out.erase(out.begin() + static_cast<long>(i));
      if (rng() % 3 == 0) {
        d.Retry(s, now, std::nullopt);
      } else {
        d.Done(s);
        acked[key_of[s]].push_back(s);
      }
    }
    now += milliseconds(1);
  }
  EXPECT_EQ(d.size(), 0u);
  EXPECT_EQ(acked, added);
}

}  // namespace
}  // namespace outbox::http

namespace outbox::http {
namespace {

TEST(HttpBatch, BodyIsAnArrayWithEachEventsIdAndItsValueVerbatim) {
  OwnedRecord a, b, c;
  a.event_id = "id-a";
  a.topic = "t.created";
  a.key = "k1";
  a.value = R"({"n": 1,  "x":[1,2]})";
  a.headers = {{"id", "id-a"}, {"source_lsn", "0/16"}};
  b.event_id = "id-b";
  b.topic = "t.created";
  b.value = "not json";
  c.event_id = "id-c";
  c.topic = "t.created";
  c.key = "k2";
  c.headers = {{"x", std::nullopt}};
  const std::string body = BatchBody({&a, &b, &c});
  EXPECT_EQ(body,
            R"([{"headers":{"id":"id-a","source_lsn":"0/16"},"id":"id-a","key":"k1","topic":"t.created",)"
            R"("value":{"n": 1,  "x":[1,2]}},)"
            R"({"headers":{},"id":"id-b","key":null,"topic":"t.created","value":"not json"},)"
            R"({"headers":{"x":null},"id":"id-c","key":"k2","topic":"t.created","value":null}])");
  const auto parsed = nlohmann::json::parse(body, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded());
  EXPECT_EQ(parsed.size(), 3u);
}

TEST(HttpBatch, IdempotencyKeyIsDerivedFromTheIdsInOrder) {
  EXPECT_EQ(BatchIdempotencyKey({"only"}), "only");
  const std::string ab = BatchIdempotencyKey({"a", "b"});
  EXPECT_EQ(ab, BatchIdempotencyKey({"a", "b"}));
  EXPECT_TRUE(ab.starts_with("batch-2-")) << ab;
  EXPECT_NE(ab, BatchIdempotencyKey({"b", "a"}));
  EXPECT_NE(ab, BatchIdempotencyKey({"ab"}));
  EXPECT_NE(BatchIdempotencyKey({"a", "bc"}), BatchIdempotencyKey({"ab", "c"}));
}

}  // namespace
}  // namespace outbox::http
