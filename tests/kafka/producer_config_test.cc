// BuildProducerConfig: the relay's librdkafka defaults, the user's keys over them, and the refusal of settings
// that break at-least-once delivery in order (SPEC.md §3 kafka.*).
#include "kafka/producer_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <utility>

namespace outbox::kafka {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using Conf = std::map<std::string, std::string>;

int64_t AsInt(const Conf& conf, const std::string& key) {
  auto it = conf.find(key);
  if (it == conf.end()) {
    ADD_FAILURE() << "no " << key;
    return 0;
  }
  return std::stoll(it->second);
}

TEST(BuildProducerConfig, AppliesTheRelaysDefaults) {
  auto conf = BuildProducerConfig({}, ProducerBounds{}, /*unsafe=*/false);
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_EQ(conf->at("enable.idempotence"), "true");
  EXPECT_EQ(conf->at("acks"), "all");
  EXPECT_EQ(conf->at("message.timeout.ms"), "0");
  EXPECT_EQ(conf->at("partitioner"), "murmur2_random");
  EXPECT_EQ(conf->at("compression.type"), "lz4");
  EXPECT_EQ(conf->at("linger.ms"), "5");
  EXPECT_EQ(conf->at("topic.metadata.propagation.max.ms"), "300000");
}

TEST(SendsHeldWhenIdle, OnlyUnderTheDefaultLingerAndNotInATransaction) {
  EXPECT_TRUE(SendsHeldWhenIdle({}, /*exactly_once=*/false));
  EXPECT_TRUE(SendsHeldWhenIdle({{"batch.size", "1000000"}}, false));
  EXPECT_FALSE(SendsHeldWhenIdle({{"linger.ms", "5"}}, false)) << "a user's linger.ms is kept as set";
  EXPECT_FALSE(SendsHeldWhenIdle({{"queue.buffering.max.ms", "20"}}, false)) << "linger.ms's other name";
  EXPECT_FALSE(SendsHeldWhenIdle({}, /*exactly_once=*/true)) << "the commit sends a transaction's records";
}

TEST(BuildProducerConfig, ExactlyOnceBoundsTheMessageTimeoutByTheTransactionTimeout) {
  auto conf = BuildProducerConfig({}, ProducerBounds{}, false, /*exactly_once=*/true);
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_EQ(conf->at("message.timeout.ms"), "60000");  // librdkafka's transaction.timeout.ms default
  EXPECT_FALSE(conf->contains("transactional.id"));      // set where the sink is made, from the cluster and slot
  auto shorter = BuildProducerConfig({{"transaction.timeout.ms", "5000"}}, ProducerBounds{}, false, true);
  ASSERT_TRUE(shorter.ok()) << shorter.status();
  EXPECT_EQ(shorter->at("message.timeout.ms"), "5000");
  auto own = BuildProducerConfig({{"transaction.timeout.ms", "5000"}, {"message.timeout.ms", "3000"}},
                                 ProducerBounds{}, false, true);
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_EQ(own->at("message.timeout.ms"), "3000");
  EXPECT_EQ(TransactionTimeoutMs(*shorter), 5000);
  EXPECT_EQ(TransactionalId("7300000000000000001", "orders"), "outbox-relay.7300000000000000001.orders");
}

TEST(BuildProducerConfig, ExactlyOnceRefusesWhatContradictsItNamingTheKey) {
  const auto error = [](const Conf& user) {
    auto conf = BuildProducerConfig(user, ProducerBounds{}, false, /*exactly_once=*/true);
    return conf.ok() ? std::string() : std::string(conf.status().message());
  };
  EXPECT_THAT(error({{"transactional.id", "mine"}}), StartsWith("kafka.transactional.id: \"mine\" is the relay's"));
  EXPECT_THAT(error({{"enable.idempotence", "false"}}), StartsWith("kafka.enable.idempotence: \"false\" must be true"));
  EXPECT_THAT(error({{"message.timeout.ms", "0"}}), StartsWith("kafka.message.timeout.ms: \"0\" must be from 1"));
  EXPECT_THAT(error({{"transaction.timeout.ms", "5000"}, {"message.timeout.ms", "6000"}}),
              StartsWith("kafka.message.timeout.ms: \"6000\" must be from 1 to transaction.timeout.ms (5000)"));
  EXPECT_THAT(error({{"delivery.timeout.ms", "70000"}}), StartsWith("kafka.delivery.timeout.ms"));
  EXPECT_THAT(error({{"acks", "1"}}), StartsWith("kafka.acks"));  // the at-least-once refusals hold too
  EXPECT_EQ(error({{"message.timeout.ms", "30000"}}), "");
}

TEST(BuildProducerConfig, QueueLimitsAreAboveTheDeliveryBounds) {
  for (const ProducerBounds bounds : {ProducerBounds{}, ProducerBounds{.max_inflight_events = 1,
                                                                       .max_inflight_bytes = 1},
                                      ProducerBounds{.max_inflight_events = 5000000,
                                                     .max_inflight_bytes = 1LL << 32}}) {
    auto conf = BuildProducerConfig({}, bounds, false);
    ASSERT_TRUE(conf.ok()) << conf.status();
    EXPECT_GT(AsInt(*conf, "queue.buffering.max.messages"), bounds.max_inflight_events);
    EXPECT_GT(AsInt(*conf, "queue.buffering.max.kbytes") * 1024, bounds.max_inflight_bytes);
  }
}

TEST(BuildProducerConfig, QueueLimitsAreCappedAtLibrdkafkasMaximum) {
  auto conf = BuildProducerConfig({}, ProducerBounds{.max_inflight_events = 1LL << 40, .max_inflight_bytes = 1LL << 50},
                                  false);
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_EQ(AsInt(*conf, "queue.buffering.max.messages"), 2147483647);
  EXPECT_EQ(AsInt(*conf, "queue.buffering.max.kbytes"), 2147483647);
}

TEST(BuildProducerConfig, UserKeysWinOverDefaults) {
  const Conf user = {{"bootstrap.servers", "broker:9092"},
                     {"compression.type", "zstd"},
                     {"linger.ms", "50"},
                     {"partitioner", "consistent_random"},
                     {"queue.buffering.max.messages", "200000"},
                     {"client.id", "my-relay"}};
  auto conf = BuildProducerConfig(user, ProducerBounds{}, false);
  ASSERT_TRUE(conf.ok()) << conf.status();
  for (const auto& [key, value] : user) EXPECT_EQ(conf->at(key), value) << key;
  EXPECT_EQ(conf->at("acks"), "all");  // untouched defaults stay
}

TEST(BuildProducerConfig, AcceptsSafeSpellingsOfTheGuarantee) {
  for (const Conf& user : {Conf{{"acks", "-1"}}, Conf{{"acks", "ALL"}}, Conf{{"enable.idempotence", "TRUE"}},
                           Conf{{"request.required.acks", "all"}}, Conf{{"request.required.acks", "-1"}},
                           Conf{{"message.timeout.ms", "0"}}, Conf{{"delivery.timeout.ms", "0"}}}) {
    auto conf = BuildProducerConfig(user, ProducerBounds{}, false);
    EXPECT_TRUE(conf.ok()) << user.begin()->first << "=" << user.begin()->second << ": " << conf.status();
  }
}

struct Refusal {
  std::string key;
  std::string value;
};

void PrintTo(const Refusal& r, std::ostream* os) { *os << r.key << "=" << r.value; }

class RefusedSetting : public ::testing::TestWithParam<Refusal> {};

TEST_P(RefusedSetting, IsInvalidArgumentNamingTheKafkaKey) {
  const Refusal& p = GetParam();
  auto conf = BuildProducerConfig({{p.key, p.value}}, ProducerBounds{}, /*unsafe=*/false);
  ASSERT_FALSE(conf.ok());
  EXPECT_EQ(conf.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(conf.status().message());
  EXPECT_THAT(message, StartsWith("kafka." + p.key + ":"));
  EXPECT_THAT(message, HasSubstr(p.value));
  EXPECT_THAT(message, HasSubstr("delivery.unsafe"));
}

TEST_P(RefusedSetting, IsAcceptedAsIsWithUnsafe) {
  const Refusal& p = GetParam();
  auto conf = BuildProducerConfig({{p.key, p.value}}, ProducerBounds{}, /*unsafe=*/true);
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_EQ(conf->at(p.key), p.value);
}

INSTANTIATE_TEST_SUITE_P(BreaksTheGuarantee, RefusedSetting,
                         ::testing::Values(Refusal{"enable.idempotence", "false"}, Refusal{"acks", "1"},
                                           Refusal{"acks", "0"}, Refusal{"request.required.acks", "1"},
                                           Refusal{"message.timeout.ms", "30000"},
                                           Refusal{"delivery.timeout.ms", "1000"},
                                           Refusal{"message.timeout.ms", "forever"},
                                           Refusal{"retries", "1"}, Refusal{"retries", "2147483646"},
                                           Refusal{"message.send.max.retries", "10"}, Refusal{"retries", "many"},
                                           Refusal{"queue.buffering.max.messages", "10"},
                                           Refusal{"queue.buffering.max.messages", "100999"},
                                           Refusal{"queue.buffering.max.kbytes", "1024"},
                                           Refusal{"queue.buffering.max.kbytes", "lots"}),
                         [](const ::testing::TestParamInfo<Refusal>& info) {
                           std::string name = info.param.key + "_" + info.param.value;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

// The smallest queue limits accepted are the delivery bounds plus the headroom; they follow the bounds.
TEST(BuildProducerConfig, QueueLimitsAtTheDeliveryBoundsPlusHeadroomAreAccepted) {
  const ProducerBounds bounds{.max_inflight_events = 5000, .max_inflight_bytes = 4 * 1024 * 1024};
  EXPECT_EQ(MinQueueMessages(bounds), 6000);
  EXPECT_EQ(MinQueueKbytes(bounds), 4096 + 1024);
  EXPECT_TRUE(BuildProducerConfig({{"queue.buffering.max.messages", "6000"}, {"queue.buffering.max.kbytes", "5120"}},
                                  bounds, false)
                  .ok());
  auto low = BuildProducerConfig({{"queue.buffering.max.kbytes", "5119"}}, bounds, false);
  ASSERT_FALSE(low.ok());
  EXPECT_THAT(std::string(low.status().message()), HasSubstr("at least 5120"));
  EXPECT_THAT(std::string(low.status().message()), HasSubstr("delivery.max_inflight_bytes"));
  auto few = BuildProducerConfig({{"queue.buffering.max.messages", "5999"}}, bounds, false);
  ASSERT_FALSE(few.ok());
  EXPECT_THAT(std::string(few.status().message()), HasSubstr("delivery.max_inflight_events"));
  EXPECT_TRUE(BuildProducerConfig({{"retries", "2147483647"}, {"message.send.max.retries", "2147483647"}}, bounds, false)
                  .ok());
}

// More than 5 requests in flight is refused naming the key while idempotence is on, even with delivery.unsafe
// (librdkafka would refuse it when creating the producer); with idempotence off (unsafe) it is the user's call.
TEST(BuildProducerConfig, MoreThanFiveInFlightWithIdempotenceIsRefusedNamingTheKey) {
  for (const char* key : {"max.in.flight.requests.per.connection", "max.in.flight"}) {
    for (const bool unsafe : {false, true}) {
      for (const char* value : {"6", "1000", "0", "x"}) {
        auto conf = BuildProducerConfig({{key, value}}, ProducerBounds{}, unsafe);
        ASSERT_FALSE(conf.ok()) << key << "=" << value;
        EXPECT_EQ(conf.status().code(), absl::StatusCode::kInvalidArgument);
        EXPECT_THAT(std::string(conf.status().message()), StartsWith(std::string("kafka.") + key + ":"));
      }
      EXPECT_TRUE(BuildProducerConfig({{key, "5"}}, ProducerBounds{}, unsafe).ok()) << key;
    }
    EXPECT_TRUE(BuildProducerConfig({{key, "10"}, {"enable.idempotence", "false"}}, ProducerBounds{}, true).ok());
  }
}

TEST(BuildProducerConfig, UnsafeAcceptsEveryBreakingSettingTogether) {
  const Conf user = {{"enable.idempotence", "false"}, {"acks", "1"}, {"message.timeout.ms", "30000"},
                     {"delivery.timeout.ms", "1000"}, {"request.required.acks", "0"},
                     {"retries", "1"},              {"queue.buffering.max.messages", "5"},
                     {"queue.buffering.max.kbytes", "1"}};
  auto conf = BuildProducerConfig(user, ProducerBounds{}, /*unsafe=*/true);
  ASSERT_TRUE(conf.ok()) << conf.status();
  for (const auto& [key, value] : user) EXPECT_EQ(conf->at(key), value) << key;
}

}  // namespace
}  // namespace outbox::kafka
