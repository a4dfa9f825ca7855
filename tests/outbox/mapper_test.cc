// OutboxMapper: outbox INSERTs to the records of SPEC.md §4, from hand-built Relation and TupleData values.
#include "outbox/mapper.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/lsn.h"
#include "config/config.h"
#include "outbox/v1/envelope.pb.h"
#include "pg/pgoutput.h"
#include "pg/type_oids.h"

namespace outbox::outbox {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using pg::oid::kBytea;
using pg::oid::kInt8;
using pg::oid::kJsonb;
using pg::oid::kText;
using pg::oid::kTimestamp;
using pg::oid::kTimestampTz;
using pg::oid::kUuid;

constexpr uint32_t kOutboxOid = 16384;
constexpr int64_t kCommitTimeMs = 1700000000000;  // 2023-11-14 22:13:20 UTC
const Lsn kCommitLsn(0x16B374D848ULL);              // "16/B374D848"
constexpr const char* kEventId = "7b2f6c1e-0d1a-4e8b-9a57-3c1f2e4d5a6b";

// The default outbox layout (pg::CreateOutboxTableSql).
pg::Relation OutboxRelation() {
  pg::Relation r;
  r.oid = kOutboxOid;
  r.nspname = "public";
  r.relname = "outbox";
  r.columns = {
      {.flags = 1, .name = "id", .type_oid = kUuid},
      {.flags = 0, .name = "aggregatetype", .type_oid = kText},
      {.flags = 0, .name = "aggregateid", .type_oid = kText},
      {.flags = 0, .name = "type", .type_oid = kText},
      {.flags = 0, .name = "payload", .type_oid = kJsonb},
      {.flags = 0, .name = "created_at", .type_oid = kTimestampTz},
  };
  return r;
}

// Builds an outbox row by column name and maps it with a mapper that lives as long as the fixture (records view
// the mapper's buffers and the row's strings).
class MapperTest : public ::testing::Test {
 protected:
  MapperTest()
      : relation_(OutboxRelation()),
        values_{kEventId, "Order", "order-42", "OrderCreated", R"({"amount": 10, "currency": "EUR"})",
                "2024-05-01 12:00:00.123456+00"} {}

  int Index(std::string_view column) const {
    for (size_t i = 0; i < relation_.columns.size(); ++i) {
      if (relation_.columns[i].name == column) return static_cast<int>(i);
    }
    ADD_FAILURE() << "no column " << column;
    return 0;
  }
  void Set(std::string_view column, std::optional<std::string> value) { values_[Index(column)] = std::move(value); }
  void SetType(std::string_view column, uint32_t type_oid) { relation_.columns[Index(column)].type_oid = type_oid; }
  // The payload column a bytea (\x00ff41) and the key column a bigint (`key`), as a new Relation message gives them.
  void ByteaPayloadAndBigintKey(const std::string& key) {
    SetType("payload", kBytea);
    SetType("aggregateid", kInt8);
    Set("payload", "\\x00ff41");
    Set("aggregateid", key);
    mapper().OnRelation(kOutboxOid);  // the columns' types are read again
  }

  pg::TupleData Tuple() const {
    pg::TupleData t;
    for (const std::optional<std::string>& v : values_) {
      pg::ColumnValue c;
      if (v) {
        c.kind = pg::ColumnValue::Kind::kText;
        c.data = *v;
      }
      t.columns.push_back(c);
    }
    return t;
  }

  // Constructs the mapper from config_ on first use.
  OutboxMapper& mapper() {
    if (!mapper_) mapper_.emplace(config_);
    return *mapper_;
  }
  absl::StatusOr<Record> Map() {
    tuple_ = Tuple();
    return mapper().Map(relation_, tuple_, kCommitLsn, kCommitTimeMs);
  }
  // A new mapper (under config_ as it is now) mapping a row whose key column is of `key_type` holding `key` and whose
  // payload column is of `payload_type` holding `payload`.
  absl::StatusOr<Record> MapKeyAndPayload(uint32_t key_type, const std::string& key, uint32_t payload_type,
                                          const std::string& payload) {
    mapper_.reset();
    SetType("aggregateid", key_type);
    SetType("payload", payload_type);
    Set("aggregateid", key);
    Set("payload", payload);
    return Map();
  }
  // A payload column of `type` holding `text` maps to an empty value, no tombstone.
  void ExpectEmptyValue(uint32_t type, const std::string& text) {
    SetType("payload", type);
    Set("payload", text);
    auto r = Map();
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(r->value.has_value());
    EXPECT_EQ(*r->value, "");
  }
  // `r` is a per-event error whose message holds `part`.
  static void ExpectPerEventError(const absl::StatusOr<Record>& r, std::string_view part) {
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(IsPerEventError(r.status())) << r.status();
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(part));
  }
  // Under each of `modes` (outbox.event_converting_failure_handling_mode; a new mapper with the catalog `c`): the row
  // maps, and its header `name` is null.
  void ExpectNullHeaderUnder(std::initializer_list<config::ConvertingFailure> modes, const pg::ColumnCatalog& c,
                             std::string_view name);

  config::OutboxConfig config_;
  pg::Relation relation_;
  std::vector<std::optional<std::string>> values_;
  pg::TupleData tuple_;
  std::optional<OutboxMapper> mapper_;
};

std::vector<std::string> HeaderNames(const Record& r) {
  std::vector<std::string> names;
  for (const Header& h : r.headers) names.emplace_back(h.name);
  return names;
}

std::optional<std::string> HeaderValue(const Record& r, std::string_view name) {
  for (const Header& h : r.headers) {
    if (h.name == name) return h.value ? std::optional<std::string>(std::string(*h.value)) : std::nullopt;
  }
  ADD_FAILURE() << "no header " << name;
  return std::nullopt;
}

std::string Message(const absl::Status& status) { return std::string(status.message()); }

void MapperTest::ExpectNullHeaderUnder(std::initializer_list<config::ConvertingFailure> modes,
                                       const pg::ColumnCatalog& c, std::string_view name) {
  for (config::ConvertingFailure mode : modes) {
    config_.event_converting_failure_handling_mode = mode;
    mapper_.reset();
    mapper().SetCatalog({c});
    auto r = Map();
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(HeaderValue(*r, name), std::nullopt);
  }
}

// --- Records ---------------------------------------------------------------------------------------------------

TEST_F(MapperTest, TopicComesFromTypeWithTheDefaultTemplate) {
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->topic, "outbox.event.OrderCreated");
}

TEST_F(MapperTest, RouteByAggregateTypeUsesThatColumn) {
  config_.route_by = "aggregatetype";
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->topic, "outbox.event.Order");
}

TEST_F(MapperTest, CustomTemplateReplacesEveryPlaceholder) {
  config_.route_topic = "events.${routedByValue}.v1.${routedByValue}";
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->topic, "events.OrderCreated.v1.OrderCreated");
}

TEST_F(MapperTest, KeyIsTheAggregateId) {
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->key.has_value());
  EXPECT_EQ(*r->key, "order-42");
}

TEST_F(MapperTest, NullKeyColumnGivesANullKey) {
  Set("aggregateid", std::nullopt);
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->key.has_value());
}

TEST_F(MapperTest, EmptyKeyColumnGivesAnEmptyNotANullKey) {
  Set("aggregateid", "");
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->key.has_value());
  EXPECT_EQ(*r->key, "");
}

TEST_F(MapperTest, ValueIsThePayloadTextExactly) {
  // jsonb's normalized output (sorted keys, ", " and ": " separators, escapes) passes through untouched.
  const std::string payload = R"({"a": 1, "b": [1, 2.50, {"c": null}], "s": "\u00e9 \"q\" é"})";
  Set("payload", payload);
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->value.has_value());
  EXPECT_EQ(*r->value, payload);
}

TEST_F(MapperTest, NullPayloadGivesATombstone) {
  Set("payload", std::nullopt);
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->value.has_value());
  EXPECT_EQ(r->topic, "outbox.event.OrderCreated");
  EXPECT_EQ(*r->key, "order-42");
}

TEST_F(MapperTest, EmptyPayloadIsAnEmptyValueByDefault) { ExpectEmptyValue(kText, ""); }

TEST_F(MapperTest, EmptyPayloadGivesATombstoneWhenTombstoneOnEmptyPayload) {
  config_.tombstone_on_empty_payload = true;
  SetType("payload", kText);
  Set("payload", "");
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->value.has_value());
}

// Debezium's Outbox Event Router: payload.toString().trim().isEmpty(), and Java's trim() strips every character up
// to U+0020 (spaces, tabs, line breaks, other control characters) from both ends.
TEST_F(MapperTest, ABlankPayloadAsJavaTrimsItGivesATombstoneWhenTombstoneOnEmptyPayload) {
  config_.tombstone_on_empty_payload = true;
  SetType("payload", kText);
  for (const std::string& blank : {std::string(" "), std::string(" \t\r\n "), std::string("\x01\x1f\x20", 3)}) {
    Set("payload", blank);
    auto r = Map();
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE(r->value.has_value()) << "payload of " << blank.size() << " blank characters";
  }
  // Not blank: a character above U+0020 (U+00A0, a no-break space, is one; Java's trim keeps it), or any text.
  for (const std::string& kept : {std::string("\xc2\xa0"), std::string(" x "), std::string("\x7f")}) {
    Set("payload", kept);
    auto r = Map();
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(r->value.has_value()) << kept;
    EXPECT_EQ(*r->value, kept);
  }
}

TEST_F(MapperTest, ABlankPayloadIsSentAsItIsByDefault) {
  SetType("payload", kText);
  Set("payload", " ");
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->value.has_value());
  EXPECT_EQ(*r->value, " ");
}

TEST_F(MapperTest, NonEmptyPayloadIsKeptWhenTombstoneOnEmptyPayload) {
  config_.tombstone_on_empty_payload = true;
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->value.has_value());
  EXPECT_EQ(*r->value, R"({"amount": 10, "currency": "EUR"})");
}

TEST_F(MapperTest, ByteaPayloadGivesRawBytes) {
  SetType("payload", kBytea);
  Set("payload", "\\x0102ff");
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->value.has_value());
  EXPECT_EQ(*r->value, std::string("\x01\x02\xff", 3));
}

TEST_F(MapperTest, EmptyByteaPayloadGivesATombstoneWhenTombstoneOnEmptyPayload) {
  config_.tombstone_on_empty_payload = true;
  SetType("payload", kBytea);
  Set("payload", "\\x");
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->value.has_value());
}

// As Debezium judges a payload empty (outbox.string_converter_values debezium, Debezium files): by Java's text of its
// value, which for a bytea is its ByteBuffer's, never blank. An empty bytea under ByteArrayConverter is an empty value.
TEST_F(MapperTest, EmptyByteaPayloadIsNoTombstoneAsDebeziumJudgesIt) {
  config_.tombstone_on_empty_payload = true;
  config_.string_converter_values = config::StringValues::kDebezium;
  config_.value_converter = config::Converter::kBytes;
  ExpectEmptyValue(kBytea, "\\x");
}

TEST_F(MapperTest, EmptyByteaPayloadIsAnEmptyValueByDefault) { ExpectEmptyValue(kBytea, "\\x"); }

TEST_F(MapperTest, MalformedByteaPayloadIsAPerEventError) {
  SetType("payload", kBytea);
  Set("payload", "\\x01zz");
  auto r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsPerEventError(r.status()));
  EXPECT_THAT(Message(r.status()), HasSubstr(kEventId));
}

TEST_F(MapperTest, HeadersAreIdThenSourceLsnByDefault) {
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(HeaderNames(*r), ::testing::ElementsAre("id", "source_lsn"));
  EXPECT_EQ(HeaderValue(*r, "id"), kEventId);
  EXPECT_EQ(HeaderValue(*r, "source_lsn"), "16/B374D848");
  EXPECT_EQ(r->event_id, kEventId);
}

TEST_F(MapperTest, AdditionalFieldsComeBetweenIdAndSourceLsnInConfiguredOrder) {
  config_.fields.additional = {
      config::AdditionalField{.column = "aggregatetype", .placement = "header", .name = "aggregate"},
      config::AdditionalField{.column = "created_at", .placement = "header", .name = "created_at"},
      config::AdditionalField{.column = "aggregateid", .placement = "header", .name = "aggregate_id"},
  };
  Set("aggregateid", std::nullopt);
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(HeaderNames(*r),
              ::testing::ElementsAre("id", "aggregate", "created_at", "aggregate_id", "source_lsn"));
  EXPECT_EQ(HeaderValue(*r, "aggregate"), "Order");
  EXPECT_EQ(HeaderValue(*r, "created_at"), "2024-05-01 12:00:00.123456+00");
  EXPECT_EQ(HeaderValue(*r, "aggregate_id"), std::nullopt);  // a NULL column is a null header value
  EXPECT_EQ(HeaderValue(*r, "source_lsn"), "16/B374D848");
}

TEST_F(MapperTest, SourceLsnIsTheCommitLsnAsXSlashX) {
  tuple_ = Tuple();
  auto r = mapper().Map(relation_, tuple_, Lsn(0x00000000000000A0ULL), kCommitTimeMs);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderValue(*r, "source_lsn"), "0/A0");
}

TEST_F(MapperTest, BytesCountsTopicKeyValueAndHeaders) {
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  const size_t expected = std::string_view("outbox.event.OrderCreated").size() + std::string_view("order-42").size() +
                          std::string_view(R"({"amount": 10, "currency": "EUR"})").size() + 2 +
                          std::string_view(kEventId).size() + 10 + std::string_view("16/B374D848").size();
  EXPECT_EQ(r->Bytes(), expected);
}

TEST_F(MapperTest, SuccessiveMapsReuseBuffersWithoutLeakingFields) {
  config_.fields.additional = {config::AdditionalField{.column = "aggregatetype", .placement = "header", .name = "agg"}};
  ASSERT_TRUE(Map().ok());
  Set("id", "second");
  Set("type", "OrderShipped");
  Set("aggregatetype", std::nullopt);
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->topic, "outbox.event.OrderShipped");
  EXPECT_EQ(r->event_id, "second");
  EXPECT_EQ(HeaderValue(*r, "agg"), std::nullopt);
  EXPECT_EQ(r->headers.size(), 3u);
}

// --- Timestamps ------------------------------------------------------------------------------------------------

TEST_F(MapperTest, TimestampIsTheCommitTimeByDefault) {
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->timestamp_ms, kCommitTimeMs);
}

TEST_F(MapperTest, TimestamptzColumnGivesItsMillisecondsWithMicrosTruncated) {
  config_.fields.timestamp = "created_at";
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->timestamp_ms, 1714564800123);
}

TEST_F(MapperTest, TimestamptzColumnAppliesItsOffset) {
  config_.fields.timestamp = "created_at";
  Set("created_at", "2024-05-01 12:00:00.123456+05:30");
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->timestamp_ms, 1714564800123 - 19800000);
}

TEST_F(MapperTest, TimestampWithoutZoneColumnIsReadAsUtc) {
  config_.fields.timestamp = "created_at";
  SetType("created_at", kTimestamp);
  Set("created_at", "2024-05-01 12:00:00.123456");
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->timestamp_ms, 1714564800123);
}

TEST_F(MapperTest, BigintColumnIsEpochMilliseconds) {
  config_.fields.timestamp = "created_at";
  SetType("created_at", kInt8);
  Set("created_at", "1714564800123");
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->timestamp_ms, 1714564800123);
}

TEST_F(MapperTest, NullTimestampFallsBackToTheCommitTime) {
  config_.fields.timestamp = "created_at";
  Set("created_at", std::nullopt);
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->timestamp_ms, kCommitTimeMs);
}

TEST_F(MapperTest, UnparsableTimestampIsAPerEventErrorNamingTheEvent) {
  config_.fields.timestamp = "created_at";
  Set("created_at", "infinity");
  auto r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(IsPerEventError(r.status()));
  EXPECT_THAT(Message(r.status()), HasSubstr("infinity"));
  EXPECT_THAT(Message(r.status()), HasSubstr(kEventId));
  EXPECT_THAT(Message(r.status()), HasSubstr("16/B374D848"));
}

TEST_F(MapperTest, UnparsableBigintTimestampIsAPerEventError) {
  config_.fields.timestamp = "created_at";
  SetType("created_at", kInt8);
  Set("created_at", "12abc");
  auto r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsPerEventError(r.status()));
  EXPECT_THAT(Message(r.status()), HasSubstr(kEventId));
}

TEST_F(MapperTest, TimestampColumnOfAnotherTypeIsFatal) {
  config_.fields.timestamp = "created_at";
  SetType("created_at", kText);
  auto r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(IsPerEventError(r.status()));
  EXPECT_THAT(Message(r.status()), HasSubstr("created_at"));
}

// --- Errors ----------------------------------------------------------------------------------------------------

TEST_F(MapperTest, NullIdIsAPerEventErrorNamingTheLsn) {
  Set("id", std::nullopt);
  auto r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsPerEventError(r.status()));
  EXPECT_THAT(Message(r.status()), HasSubstr("\"id\""));
  EXPECT_THAT(Message(r.status()), HasSubstr("event id=NULL"));
  EXPECT_THAT(Message(r.status()), HasSubstr("16/B374D848"));
}

TEST_F(MapperTest, NullRouteColumnIsAPerEventErrorNamingTheEventAndLsn) {
  Set("type", std::nullopt);
  auto r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsPerEventError(r.status()));
  EXPECT_THAT(Message(r.status()), HasSubstr("\"type\""));
  EXPECT_THAT(Message(r.status()), HasSubstr(kEventId));
  EXPECT_THAT(Message(r.status()), HasSubstr("16/B374D848"));
}

TEST_F(MapperTest, IllegalTopicNamesArePerEventErrorsNamingTheEvent) {
  config_.route_topic = "${routedByValue}";
  const std::vector<std::string> bad = {"Order Created", "orders/created", std::string(250, 'a'), ".", "..", ""};
  for (const std::string& value : bad) {
    Set("type", value);
    auto r = Map();
    ASSERT_FALSE(r.ok()) << "topic \"" << value << "\"";
    EXPECT_TRUE(IsPerEventError(r.status())) << value;
    EXPECT_THAT(Message(r.status()), HasSubstr("illegal topic name")) << value;
    EXPECT_THAT(Message(r.status()), HasSubstr(kEventId)) << value;
  }
}

// With \b in route.topic.regex, a value Java 17 and Java 25 route to different topics (their \b differs beyond
// ASCII) is a per-event error naming the event, the value and both topics; an ASCII value routes as both do, and
// the next event of the same value is judged again (the failed route is not cached).
TEST_F(MapperTest, ARouteThatDependsOnTheJavaVersionIsAPerEventErrorNamingTheEvent) {
  config_.route_topic_regex = "(.*)\\b(.*)";
  config_.route_topic_replacement = "t.$1.$2";
  Set("type", "order");
  auto ascii = Map();
  ASSERT_TRUE(ascii.ok()) << ascii.status();
  EXPECT_EQ(ascii->topic, "t.order.");
  for (int attempt = 0; attempt < 2; ++attempt) {
    Set("type", "ord\xC3\xA9");  // ordé: a word character up to Java 18, not since
    auto r = Map();
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(IsPerEventError(r.status()));
    EXPECT_THAT(Message(r.status()), HasSubstr(kEventId));
    EXPECT_THAT(Message(r.status()), HasSubstr("the route value \"ord\xC3\xA9\""));
    EXPECT_THAT(Message(r.status()),
                HasSubstr("Java 17 routes it to \"t.ord\xC3\xA9.\" and Java 25 routes it to \"t.ord.\xC3\xA9\""));
  }
}

TEST_F(MapperTest, LongestLegalTopicNameIsAccepted) {
  config_.route_topic = "${routedByValue}";
  Set("type", std::string(249, 'a'));
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->topic.size(), 249u);
}

TEST_F(MapperTest, IllegalCharacterInTheDefaultTemplateIsAPerEventError) {
  Set("type", "Order Created");
  auto r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsPerEventError(r.status()));
  EXPECT_THAT(Message(r.status()), HasSubstr("outbox.event.Order Created"));
}

TEST_F(MapperTest, ConfiguredColumnMissingFromTheRelationIsFatalNamingColumnAndLsn) {
  relation_.columns[Index("aggregateid")].name = "aggregate_id";  // renamed
  auto r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(IsPerEventError(r.status()));
  EXPECT_THAT(Message(r.status()), HasSubstr("\"aggregateid\""));
  EXPECT_THAT(Message(r.status()), HasSubstr("outbox.fields.key"));
  EXPECT_THAT(Message(r.status()), HasSubstr("16/B374D848"));
}

TEST_F(MapperTest, MissingAdditionalFieldColumnIsFatal) {
  config_.fields.additional = {config::AdditionalField{.column = "tenant", .placement = "header", .name = "tenant"}};
  auto r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(r.status()), HasSubstr("\"tenant\""));
}

// outbox.header_values: debezium (set by Debezium configuration files): the additional fields' values as Debezium
// writes them, the other headers and the record unchanged.
TEST_F(MapperTest, DebeziumHeaderValuesAreWrittenAsDebeziumWritesThem) {
  relation_.columns.push_back({.flags = 0, .name = "urgent", .type_oid = 16});  // boolean
  relation_.columns.push_back({.flags = 0, .name = "amount", .type_oid = 1700, .type_modifier = (10 << 16 | 2) + 4});
  values_.push_back("t");
  values_.push_back("12.50");
  config_.fields.additional = {
      config::AdditionalField{.column = "urgent", .placement = "header", .name = "urgent"},
      config::AdditionalField{.column = "created_at", .placement = "header", .name = "at"},
      config::AdditionalField{.column = "amount", .placement = "header", .name = "amount"},
      config::AdditionalField{.column = "type", .placement = "header", .name = "eventType"}};
  config_.header_values = config::HeaderValues::kDebezium;
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderNames(*r), (std::vector<std::string>{"id", "urgent", "at", "amount", "eventType", "source_lsn"}));
  EXPECT_EQ(HeaderValue(*r, "id"), kEventId);
  EXPECT_EQ(HeaderValue(*r, "urgent"), "true");
  EXPECT_EQ(HeaderValue(*r, "at"), "2024-05-01T12:00:00.123456Z");
  EXPECT_EQ(HeaderValue(*r, "amount"), "12.50");
  EXPECT_EQ(HeaderValue(*r, "eventType"), "OrderCreated");
  // NULL stays a null header value.
  Set("urgent", std::nullopt);
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderValue(*r, "urgent"), std::nullopt);
}

TEST_F(MapperTest, TextHeaderValuesAreTheColumnsText) {
  relation_.columns.push_back({.flags = 0, .name = "urgent", .type_oid = 16});
  values_.push_back("t");
  config_.fields.additional = {config::AdditionalField{.column = "urgent", .placement = "header", .name = "urgent"},
                               config::AdditionalField{.column = "created_at", .placement = "header", .name = "at"}};
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderValue(*r, "urgent"), "t");
  EXPECT_EQ(HeaderValue(*r, "at"), "2024-05-01 12:00:00.123456+00");
}

TEST_F(MapperTest, DebeziumHeaderValueOfATypeNotReproducedIsFatalNamingTheColumn) {
  relation_.columns.push_back({.flags = 0, .name = "took", .type_oid = 16500});  // no catalog says what it is
  values_.push_back("1 2");
  config_.fields.additional = {config::AdditionalField{.column = "took", .placement = "header", .name = "took"}};
  config_.header_values = config::HeaderValues::kDebezium;
  auto r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(r.status()), HasSubstr("\"took\""));
  EXPECT_THAT(Message(r.status()), HasSubstr("outbox.header_values: text"));
}

// Types Debezium gives a schema but whose value it loses (seen side by side): a bit(n)[] is always null, an
// int2vector and an oidvector always an empty array, in headers (SimpleHeaderConverter: a null header, []) as in the
// envelope (Struct.toString: oids=[], a null left out). A NOT NULL bit[] fails, naming the column and the event; such a column as the id is refused.
TEST_F(MapperTest, ATypeWhoseValueDebeziumLosesIsWrittenAsDebeziumWritesIt) {
  relation_.columns.push_back({.flags = 0, .name = "bits", .type_oid = pg::oid::kBitArray, .type_modifier = 3});
  relation_.columns.push_back({.flags = 0, .name = "vec", .type_oid = pg::oid::kInt2Vector});
  relation_.columns.push_back({.flags = 0, .name = "oids", .type_oid = pg::oid::kOidVector});
  values_.resize(relation_.columns.size() - 3);
  values_.push_back("{101,010}");
  values_.push_back("1 2");
  values_.push_back("3");
  config_.fields.additional = {config::AdditionalField{.column = "bits", .placement = "header", .name = "bits"},
                               config::AdditionalField{.column = "vec", .placement = "header", .name = "vec"},
                               config::AdditionalField{.column = "oids", .placement = "envelope", .name = "oids"},
                               config::AdditionalField{.column = "bits", .placement = "envelope", .name = "ebits"}};
  config_.header_values = config::HeaderValues::kDebezium;
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderValue(*r, "bits"), std::nullopt);
  EXPECT_EQ(HeaderValue(*r, "vec"), "[]");
  // Struct.toString (StringConverter) leaves the null out; a bit[] is not refused there for its bytes.
  EXPECT_THAT(r->value.value_or(""), HasSubstr(",oids=[]}"));
  // Under outbox.header_values: text the relay's own form: the column's text.
  config_.header_values = config::HeaderValues::kText;
  mapper_.reset();
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderValue(*r, "bits"), "{101,010}");
  EXPECT_EQ(HeaderValue(*r, "vec"), "1 2");
  config_.header_values = config::HeaderValues::kDebezium;
  mapper_.reset();
  mapper().SetCatalog({{.name = "bits", .not_null = true}});
  r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(r.status()), HasSubstr("\"bits\""));
  EXPECT_THAT(Message(r.status()), HasSubstr(std::string("event id=") + kEventId));
  // As the id under JSON headers (Debezium would write the id header as []): refused, naming the column.
  config_.fields.additional.clear();
  config_.fields.id = "vec";
  config_.header_values = config::HeaderValues::kJson;
  mapper_.reset();
  r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(r.status()), HasSubstr("\"vec\" (outbox.fields.id)"));
}

// A column of a type Debezium leaves out of its change events (box, pg_lsn, money[]), placed as a header with
// Debezium's values or in the envelope: fatal, naming the column, the type and the key that leaves it out, unless
// outbox.fields.additional_if_present (table.field.additional.missing=ignore), which leaves its field out as
// Debezium's router does. Sent as its text under outbox.header_values: text, the relay's own form.
TEST_F(MapperTest, AColumnOfATypeDebeziumLeavesOutIsLeftOutOnlyIfPresentElseFatal) {
  for (const auto& [type, text] : std::vector<std::pair<uint32_t, std::string>>{
           {603, "(3,4),(1,2)"}, {3220, "16/B374D848"}, {pg::oid::kMoneyArray, "{$1.50}"}}) {
    SCOPED_TRACE(type);
    relation_ = OutboxRelation();
    relation_.columns.push_back({.flags = 0, .name = "took", .type_oid = type});
    values_.resize(relation_.columns.size() - 1);
    values_.push_back(text);
    for (const char* placement : {"header", "envelope"}) {
      config_ = config::OutboxConfig{};
      config_.fields.additional = {config::AdditionalField{.column = "took", .placement = placement, .name = "took"},
                                   config::AdditionalField{.column = "type", .placement = "header", .name = "eventType"}};
      config_.header_values = config::HeaderValues::kDebezium;
      mapper_.reset();
      auto r = Map();
      ASSERT_FALSE(r.ok()) << placement;
      EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
      EXPECT_THAT(Message(r.status()), HasSubstr(absl::StrCat("column \"took\" (outbox.fields.additional, placement ",
                                                              placement, ")")));
      EXPECT_THAT(Message(r.status()), HasSubstr(absl::StrCat("type OID ", type)));
      EXPECT_THAT(Message(r.status()), HasSubstr("which Debezium leaves out of its change events"));
      EXPECT_THAT(Message(r.status()), HasSubstr("outbox.fields.additional_if_present: true"));

      config_.fields.additional_if_present = true;
      mapper_.reset();
      r = Map();
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(HeaderNames(*r), (std::vector<std::string>{"id", "eventType", "source_lsn"})) << placement;
      EXPECT_THAT(r->value.value_or(""), Not(HasSubstr("took"))) << placement;

      // Under include.unknown.datatypes=true Debezium writes a pg_lsn as the bytes of its text, a box as those of
      // pgjdbc's text of it, (3.0,4.0),(1.0,2.0), and still leaves a money[] out.
      config_.include_unknown_datatypes = true;
      mapper_.reset();
      r = Map();
      if (type == pg::oid::kMoneyArray) {
        ASSERT_TRUE(r.ok()) << r.status();
        EXPECT_EQ(HeaderNames(*r), (std::vector<std::string>{"id", "eventType", "source_lsn"})) << placement;
      } else if (std::string_view(placement) == "header") {  // the bytes of pgjdbc's text, in base64
        ASSERT_TRUE(r.ok()) << r.status();
        EXPECT_EQ(HeaderValue(*r, "took"), type == 603 ? "KDMuMCw0LjApLCgxLjAsMi4wKQ==" : "MTYvQjM3NEQ4NDg=");
      }
    }
    config_ = config::OutboxConfig{};
    config_.fields.additional = {config::AdditionalField{.column = "took", .placement = "header", .name = "took"}};
    mapper_.reset();
    auto r = Map();
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(HeaderValue(*r, "took"), text);
  }
}

// Under include.unknown.datatypes a role other than a placed field (the id, in JSON headers) of a type Debezium leaves
// out either way (money[]), without a catalog: refused naming the column, not read from a catalog that is not there.
TEST_F(MapperTest, AnIdOfATypeDebeziumLeavesOutUnderUnknownDatatypesIsRefusedWithoutACatalog) {
  SetType("id", pg::oid::kMoneyArray);
  Set("id", "{$1.00}");
  config_.header_values = config::HeaderValues::kJson;
  config_.include_unknown_datatypes = true;
  auto r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(Message(r.status()), HasSubstr("column \"id\" (outbox.fields.id)"));
}

// A user-defined type Debezium has no schema for (a composite type, an array of one, an array of a domain; not an
// extension type its TypeRegistry knows, such as pgvector's vector, whose array is a list of vectors whatever the
// options), read from the catalog: left out under outbox.fields.additional_if_present, else fatal naming it; under
// include.unknown.datatypes the bytes of its text, an array a list of them split at the element type's typdelim.
TEST_F(MapperTest, AUserDefinedTypeDebeziumHasNoSchemaForIsLeftOutOrUnderUnknownDatatypesBytes) {
  struct Case {
    uint32_t oid;
    std::string type_name;
    char type_type;
    uint32_t element_oid;
    std::string element_name;
    char element_type_type;
    char delimiter;
    std::string text;
    std::optional<std::string> bytes;  // the header under include_unknown_datatypes; nullopt: a type Debezium knows
    std::string known = "";            // ... whose header this is whatever the options say
  };
  for (const Case& c : std::vector<Case>{
           {16700, "pair", 'c', 0, "", 0, 0, R"x((1,"x y"))x", "KDEsInggeSIp"},
           {16701, "_pair", 'b', 16700, "pair", 'c', ';', R"x({"(1,x)";"(2,y)"})x", R"(["KDEseCk=","KDIseSk="])"},
           {16702, "cube", 'b', 0, "", 0, 0, "(1, 2)", "KDEsIDIp"},
           {16705, "_d_count", 'b', 16706, "d_count", 'd', ',', "{1,2}", R"(["MQ==","Mg=="])"},  // a domain's array
           {16703, "_vector", 'b', 16704, "vector", 'b', ',', "{\"[1,2]\"}", std::nullopt, "[[1.0,2.0]]"}}) {
    SCOPED_TRACE(c.type_name);
    relation_ = OutboxRelation();
    relation_.columns.push_back({.flags = 0, .name = "took", .type_oid = c.oid});
    values_.resize(relation_.columns.size() - 1);
    values_.push_back(c.text);
    const pg::ColumnCatalog catalog{.name = "took", .type_oid = c.oid, .type_name = c.type_name,
                                    .type_type = c.type_type, .element_oid = c.element_oid,
                                    .element_name = c.element_name, .element_type_type = c.element_type_type,
                                    .element_delimiter = c.delimiter};
    for (const bool if_present : {false, true}) {
      for (const bool unknown : {false, true}) {
        config_ = config::OutboxConfig{};
        config_.fields.additional = {config::AdditionalField{.column = "took", .placement = "header", .name = "took"}};
        config_.header_values = config::HeaderValues::kDebezium;
        config_.fields.additional_if_present = if_present;
        config_.include_unknown_datatypes = unknown;
        mapper_.reset();
        mapper().SetCatalog({catalog});
        auto r = Map();
        if (!c.bytes) {
          ASSERT_TRUE(r.ok()) << r.status();
          EXPECT_EQ(HeaderValue(*r, "took"), c.known);
        } else if (unknown) {
          ASSERT_TRUE(r.ok()) << r.status();
          EXPECT_EQ(HeaderValue(*r, "took"), c.bytes);
        } else if (if_present) {
          ASSERT_TRUE(r.ok()) << r.status();
          EXPECT_EQ(HeaderNames(*r), (std::vector<std::string>{"id", "source_lsn"}));
        } else {
          ASSERT_FALSE(r.ok());
          EXPECT_THAT(Message(r.status()), HasSubstr(absl::StrCat("type OID ", c.oid, " (", c.type_name, "), which "
                                                                  "Debezium leaves out of its change events")));
        }
      }
    }
  }
}

// An array under the non-default modes: each element as the mode writes a column of its type (numeric[] under
// decimal_handling_mode string, bytea[] under binary_handling_mode hex, time[] under time_precision_mode isostring).
TEST_F(MapperTest, ArraysUnderTheModesAreListsOfTheirElementsUnderTheModes) {
  relation_.columns.push_back({.flags = 0, .name = "amounts", .type_oid = pg::oid::kNumericArray});
  relation_.columns.push_back({.flags = 0, .name = "blobs", .type_oid = pg::oid::kByteaArray});
  relation_.columns.push_back({.flags = 0, .name = "times", .type_oid = pg::oid::kTimeArray});
  values_.push_back("{12.50,NULL}");
  values_.push_back(R"({"\\xfbff3e"})");
  values_.push_back("{13:45:07.123456}");
  config_.fields.additional = {{.column = "amounts", .placement = "header", .name = "amounts"},
                               {.column = "blobs", .placement = "header", .name = "blobs"},
                               {.column = "times", .placement = "header", .name = "times"}};
  config_.header_values = config::HeaderValues::kDebezium;
  config_.decimal_handling_mode = config::DecimalHandling::kString;
  config_.binary_handling_mode = config::BinaryHandling::kHex;
  config_.time_precision_mode = config::TimePrecision::kIsoString;
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderValue(*r, "amounts"), R"(["12.50",null])");
  EXPECT_EQ(HeaderValue(*r, "blobs"), R"(["fbff3e"])");
  EXPECT_EQ(HeaderValue(*r, "times"), R"(["13:45:07.123Z"])");
}

TEST_F(MapperTest, DebeziumHeaderValueTheFormCannotCarryIsAPerEventErrorNamingTheEvent) {
  config_.fields.additional = {config::AdditionalField{.column = "created_at", .placement = "header", .name = "at"}};
  config_.header_values = config::HeaderValues::kDebezium;
  Set("created_at", "2026-12-03 10:00:00+00 BC");
  auto r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsPerEventError(r.status())) << r.status();
  EXPECT_THAT(Message(r.status()), HasSubstr("\"created_at\""));
  EXPECT_THAT(Message(r.status()), HasSubstr(kEventId));
  EXPECT_THAT(Message(r.status()), HasSubstr("16/B374D848"));
  // The dead letter carries the row as it was.
  const Record original = mapper().Original(kCommitLsn, kCommitTimeMs);
  EXPECT_EQ(HeaderValue(original, "at"), "2026-12-03 10:00:00+00 BC");
}

// outbox.key_converter / value_converter: json writes JSON strings (JsonConverter, schemas.enable=false), bytes a
// bytea's bytes (ByteArrayConverter).
TEST_F(MapperTest, JsonConvertersWriteTheKeyAndValueAsJsonStrings) {
  config_.key_converter = config::Converter::kJson;
  config_.value_converter = config::Converter::kJson;
  Set("payload", R"({"a": "x\"y"})");
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->key, R"("order-42")");
  EXPECT_EQ(r->value, R"("{\"a\": \"x\\\"y\"}")");
  EXPECT_EQ(HeaderValue(*r, "id"), kEventId);  // headers are not converted
  // A NULL payload is the JSON text null (JsonConverter writes a null that has a schema), and a tombstone only under
  // outbox.tombstone_on_empty_payload (Debezium's router then drops the schema); a NULL key is null too.
  Set("payload", std::nullopt);
  Set("aggregateid", std::nullopt);
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, "null");
  EXPECT_EQ(r->key, "null");
  Set("aggregateid", "order-42");
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->key, R"("order-42")");  // with a NULL payload too
  config_.tombstone_on_empty_payload = true;
  mapper_.reset();
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, std::nullopt);
  // A bytea payload: its base64, as a JSON string; an integer key: a number.
  ByteaPayloadAndBigintKey("42");
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->key, "42");
  EXPECT_EQ(r->value, R"("AP9B")");
}

// Under json, a key or payload of another type Debezium has a schema for is JsonConverter's JSON of Debezium's value
// (as an envelope field's): a timestamptz payload its ISO text in UTC, a boolean key a JSON boolean; a value the
// relay does not convert is a per-event error naming the column.
TEST_F(MapperTest, JsonConvertersWriteTypedKeysAndPayloadsAsDebeziumsValues) {
  config_.key_converter = config::Converter::kJson;
  config_.value_converter = config::Converter::kJson;
  auto r = MapKeyAndPayload(pg::oid::kBool, "t", kTimestampTz, "2026-12-03 12:45:07.5+01");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->key, "true");
  EXPECT_EQ(r->value, R"("2026-12-03T11:45:07.500000Z")");
  ExpectPerEventError(MapKeyAndPayload(pg::oid::kBool, "t", kTimestampTz, "not a time"), "payload (the payload)");
}

// outbox.string_converter_values debezium (Debezium files): StringConverter writes Java's text of Debezium's value of a
// typed key or payload (a Boolean's true, a timestamptz's ISO-8601 in UTC) and a bytea's ByteBuffer; text and
// integers as they are. Under text (SPEC's format) the column's PostgreSQL text.
TEST_F(MapperTest, StringConvertersUnderDebeziumValuesWriteJavasTextOfDebeziumsValues) {
  auto r = MapKeyAndPayload(pg::oid::kBool, "t", kTimestampTz, "2026-12-03 12:45:07.5+01");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->key, "t");
  EXPECT_EQ(r->value, "2026-12-03 12:45:07.5+01");

  config_.string_converter_values = config::StringValues::kDebezium;
  r = MapKeyAndPayload(pg::oid::kBool, "t", kTimestampTz, "2026-12-03 12:45:07.5+01");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->key, "true");
  EXPECT_EQ(r->value, "2026-12-03T11:45:07.500000Z");

  r = MapKeyAndPayload(pg::oid::kBytea, "\\x6b31", pg::oid::kBytea, "\\x00ff41");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->key, "java.nio.HeapByteBuffer[pos=0 lim=2 cap=2]");
  EXPECT_EQ(r->value, "java.nio.HeapByteBuffer[pos=0 lim=3 cap=3]");

  r = MapKeyAndPayload(pg::oid::kInt8, "-7", pg::oid::kText, "{\"a\": 1}");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->key, "-7");
  EXPECT_EQ(r->value, "{\"a\": 1}");

  ExpectPerEventError(MapKeyAndPayload(pg::oid::kBool, "t", kTimestampTz, "not a time"), "payload (the payload)");
}

// Under outbox.binary_handling_mode base64 Debezium's value of a bytea is its base64 text: the string converter's
// debezium values write it, and JsonConverter a string of it; bytes (ByteArrayConverter, which fails on a string) and
// the string converter's text mode stop the relay at the table's layout, naming the column.
TEST_F(MapperTest, UnderABinaryHandlingModeAByteaKeyAndPayloadAreTheirText) {
  config_.binary_handling_mode = config::BinaryHandling::kBase64;
  config_.string_converter_values = config::StringValues::kDebezium;
  auto r = MapKeyAndPayload(pg::oid::kBytea, "\\x6b31", pg::oid::kBytea, "\\x00ff41");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->key, "azE=");
  EXPECT_EQ(r->value, "AP9B");
  config_.key_converter = config::Converter::kJson;
  config_.value_converter = config::Converter::kJson;
  r = MapKeyAndPayload(pg::oid::kBytea, "\\x6b31", pg::oid::kBytea, "\\x00ff41");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->key, R"("azE=")");
  EXPECT_EQ(r->value, R"("AP9B")");

  config_.value_converter = config::Converter::kBytes;
  r = MapKeyAndPayload(pg::oid::kBytea, "\\x6b31", pg::oid::kBytea, "\\x00ff41");
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(IsPerEventError(r.status())) << r.status();
  EXPECT_THAT(Message(r.status()), HasSubstr("fails on, as Kafka Connect's does"));
  config_.value_converter = config::Converter::kString;
  config_.string_converter_values = config::StringValues::kText;
  r = MapKeyAndPayload(pg::oid::kBytea, "\\x6b31", pg::oid::kBytea, "\\x00ff41");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(Message(r.status()), HasSubstr("outbox.string_converter_values: text"));
}

// Under outbox.string_converter_values debezium a payload whose Debezium value Java prints with an identity hash code
// (a numeric without a scale: a VariableScaleDecimal struct holding a byte array) stops the relay when the table's
// layout arrives, naming the key and the column; it is not a per-event error.
TEST_F(MapperTest, StringConvertersUnderDebeziumValuesRefuseAPayloadJavaPrintsWithAnIdentityHash) {
  config_.string_converter_values = config::StringValues::kDebezium;
  SetType("payload", pg::oid::kNumeric);
  relation_.columns[Index("payload")].type_modifier = -1;
  Set("payload", "1.5");
  auto r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(IsPerEventError(r.status())) << r.status();
  EXPECT_THAT(Message(r.status()), HasSubstr("outbox.value_converter: column \"payload\""));
  EXPECT_THAT(Message(r.status()), HasSubstr("identity hash"));
}

// A logical message's key and payload are text under json, also after a row whose typed key had a form: a message
// has no column types, and must not take the last relation's.
TEST_F(MapperTest, JsonConvertersWriteALogicalMessagesKeyAsTextAfterATypedRow) {
  config_.key_converter = config::Converter::kJson;
  config_.value_converter = config::Converter::kJson;
  auto message = mapper().MapMessage(R"({"id":"m-1","aggregateid":"order-7","type":"T","payload":"x"})", kCommitLsn,
                                     kCommitTimeMs);
  ASSERT_TRUE(message.ok()) << message.status();
  EXPECT_EQ(message->key, R"("order-7")");
  SetType("aggregateid", pg::oid::kBool);
  Set("aggregateid", "t");
  auto row = Map();
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_EQ(row->key, "true");
  message = mapper().MapMessage(R"({"id":"m-2","aggregateid":"order-8","type":"T","payload":"x"})", kCommitLsn,
                                kCommitTimeMs);
  ASSERT_TRUE(message.ok()) << message.status();
  EXPECT_EQ(message->key, R"("order-8")");
  EXPECT_EQ(message->value, R"("x")");
}

// outbox.key_converter / value_converter json_schema (JsonConverter, schemas.enable=true): the same JSON inside
// {"schema":…,"payload":…}, the schema Debezium gives the column, optional as the catalog's NOT NULL says.
TEST_F(MapperTest, JsonSchemaConvertersWriteTheEnvelopeWithTheColumnsSchema) {
  config_.key_converter = config::Converter::kJsonSchema;
  config_.value_converter = config::Converter::kJsonSchema;
  const std::vector<pg::ColumnCatalog> catalog = {
      {.name = "id", .not_null = true}, {.name = "aggregatetype", .not_null = true},
      {.name = "aggregateid", .not_null = true}, {.name = "type", .not_null = true}, {.name = "payload"},
      {.name = "created_at", .not_null = true, .has_default = true}};
  EXPECT_TRUE(mapper().NeedsCatalog());
  mapper().SetCatalog(catalog);
  Set("payload", R"({"a": "x\"y"})");
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->key, R"({"schema":{"type":"string","optional":false},"payload":"order-42"})");
  EXPECT_EQ(r->value, R"({"schema":{"type":"string","optional":true,"name":"io.debezium.data.Json","version":1},)"
                      R"("payload":"{\"a\": \"x\\\"y\"}"})");
  EXPECT_EQ(HeaderValue(*r, "id"), kEventId);  // headers are not converted
  // A NULL payload: the schema with a null payload (JsonConverter's envelope of a null with a schema)...
  Set("payload", std::nullopt);
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value,
            R"({"schema":{"type":"string","optional":true,"name":"io.debezium.data.Json","version":1},"payload":null})");
  // ...and a tombstone (no value at all) under outbox.tombstone_on_empty_payload: Debezium's router drops the schema.
  config_.tombstone_on_empty_payload = true;
  mapper_.reset();
  mapper().SetCatalog(catalog);
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, std::nullopt);
  Set("payload", " ");
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, std::nullopt);
  // A text payload is a plain string, a bytea payload bytes in base64, an integer key a number; a nullable key column
  // is optional, and its NULL a null payload.
  std::vector<pg::ColumnCatalog> nullable = catalog;
  nullable[2].not_null = false;
  mapper().SetCatalog(nullable);
  SetType("payload", kText);
  Set("payload", "plain \"text\"");
  Set("aggregateid", std::nullopt);
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, R"({"schema":{"type":"string","optional":true},"payload":"plain \"text\""})");
  EXPECT_EQ(r->key, R"({"schema":{"type":"string","optional":true},"payload":null})");
  ByteaPayloadAndBigintKey("-42");
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, R"({"schema":{"type":"bytes","optional":true},"payload":"AP9B"})");
  EXPECT_EQ(r->key, R"({"schema":{"type":"int64","optional":true},"payload":-42})");
  // One converter alone: a json_schema key beside a string value.
  config_.value_converter = config::Converter::kString;
  mapper_.reset();
  mapper().SetCatalog(nullable);
  SetType("payload", kText);
  Set("payload", "as is");
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, "as is");
  EXPECT_EQ(r->key, R"({"schema":{"type":"int64","optional":true},"payload":-42})");
}

// outbox.column_mappers (Debezium's column.truncate.* and column.mask.*): the values the record is made of change
// before anything reads them (the key cut, a NULL payload masked, so no tombstone), and a json_schema key's schema
// carries the mapper's parameter; a hash of a NULL stays NULL; a truncation of a timestamptz stops the relay naming the
// key and the column.
TEST_F(MapperTest, ColumnMappersChangeTheValuesTheRecordIsMadeOf) {
  using Kind = config::ColumnMapperRule::Kind;
  config_.column_mappers = {{.kind = Kind::kTruncate,
                             .chars = 5,
                             .columns = R"(public\.outbox\.aggregateid)",
                             .key = "outbox.column_mappers.truncate.to.5.chars"},
                            {.kind = Kind::kMask,
                             .chars = 3,
                             .columns = R"(public\.outbox\.payload)",
                             .key = "outbox.column_mappers.mask.with.3.chars"}};
  config_.key_converter = config::Converter::kJsonSchema;
  config_.tombstone_on_empty_payload = true;
  config_.fields.additional = {{.column = "created_at", .placement = "header", .name = "created_at"}};
  const std::vector<pg::ColumnCatalog> catalog = {
      {.name = "id", .not_null = true}, {.name = "aggregatetype", .not_null = true},
      {.name = "aggregateid", .not_null = true}, {.name = "type", .not_null = true}, {.name = "payload"},
      {.name = "created_at", .not_null = true}};
  EXPECT_TRUE(mapper().NeedsCatalog());
  mapper().SetCatalog(catalog);
  SetType("payload", kText);
  Set("payload", std::nullopt);
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->key, R"({"schema":{"type":"string","optional":false,"parameters":{"truncateLength":"5"}},)"
                    R"("payload":"order"})");
  EXPECT_EQ(r->value, "***");
  EXPECT_EQ(HeaderValue(*r, "created_at"), "2024-05-01 12:00:00.123456+00");  // not selected: as it is
  // A hash leaves a NULL NULL (a tombstone here).
  config_.column_mappers[1] = {.kind = Kind::kHashV2,
                               .algorithm = "MD5",
                               .salt = "s",
                               .columns = R"(public\.outbox\.payload)",
                               .key = "outbox.column_mappers.mask.hash.v2.MD5.with.salt.s"};
  mapper_.reset();
  mapper().SetCatalog(catalog);
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, std::nullopt);
  Set("payload", "bob");
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, "758aa1c638f3e35b0c2985fd7a96481c");
  // A truncation of a timestamptz (Debezium's ISO text, not PostgreSQL's) is not reproduced.
  config_.column_mappers[1] = {.kind = Kind::kTruncate,
                               .chars = 4,
                               .columns = R"(public\.outbox\.created_at)",
                               .key = "outbox.column_mappers.truncate.to.4.chars"};
  mapper_.reset();
  mapper().SetCatalog(catalog);
  r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(IsPerEventError(r.status()));
  EXPECT_THAT(Message(r.status()),
              AllOf(HasSubstr("outbox.column_mappers.truncate.to.4.chars"), HasSubstr("column \"created_at\"")));
}

// outbox.null_as_column_default (Debezium files): a NULL in a column with a default gives Debezium's default, read
// from the catalog's default expression; one the relay does not work out (a BC timestamptz) is a per-event error
// naming the column; one Debezium drops (an infinite timestamptz's: its converter overflows) leaves NULL; without the
// key NULL stays NULL.
TEST_F(MapperTest, ANullInAColumnWithADefaultGivesDebeziumsDefault) {
  config_.null_as_column_default = true;
  config_.fields.additional = {{.column = "created_at", .placement = "header", .name = "created_at"}};
  EXPECT_TRUE(mapper().NeedsCatalog());
  mapper().SetCatalog({{.name = "payload", .has_default = true, .default_expression = "'{\"d\": 1}'::jsonb"},
                       {.name = "aggregateid", .has_default = true, .default_expression = "md5('x'::text)"},
                       {.name = "created_at", .has_default = true, .default_expression = "now()"}});
  Set("payload", std::nullopt);
  Set("aggregateid", std::nullopt);
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, R"({"d": 1})");
  EXPECT_EQ(r->key, "");  // a function default: Debezium's placeholder
  Set("created_at", std::nullopt);
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderValue(*r, "created_at"), "1970-01-01 00:00:00+00");  // now(): Debezium's placeholder, the epoch
  mapper().SetCatalog({{.name = "created_at", .has_default = true,
                        .default_expression = "'infinity'::timestamp with time zone"}});
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(HeaderValue(*r, "created_at").has_value());
  mapper().SetCatalog({{.name = "created_at", .has_default = true,
                        .default_expression = "'2024-05-01 10:00:00+00 BC'::timestamp with time zone"}});
  r = Map();
  EXPECT_TRUE(IsPerEventError(r.status())) << r.status();
  EXPECT_THAT(Message(r.status()), HasSubstr("column \"created_at\" is NULL, and Debezium would write its default"));
  config_.null_as_column_default = false;
  mapper_.reset();
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, std::nullopt);
  EXPECT_EQ(r->key, std::nullopt);
}

// An infinite default of a timestamp (longer than 3 digits) or a date is written as Debezium writes it (its saturated
// microseconds, its cut epoch day) where Debezium's value is written: a header under header_values other than text,
// an envelope field. Where the relay writes the column's PostgreSQL text (a text header, the key, the route) it is a
// per-event error naming the column, as before.
TEST_F(MapperTest, AnInfiniteDefaultIsDebeziumsOnlyWhereItsValueIsWritten) {
  relation_.columns.push_back({.flags = 0, .name = "valid_until", .type_oid = 1114, .type_modifier = -1});
  relation_.columns.push_back({.flags = 0, .name = "since", .type_oid = 1082, .type_modifier = -1});
  values_.push_back(std::nullopt);
  values_.push_back(std::nullopt);
  config_.null_as_column_default = true;
  config_.header_values = config::HeaderValues::kDebezium;
  config_.fields.additional = {{.column = "valid_until", .placement = "header", .name = "valid_until"},
                               {.column = "since", .placement = "envelope", .name = "since"}};
  const std::vector<pg::ColumnCatalog> catalog = {
      {.name = "valid_until", .has_default = true, .default_expression = "'infinity'::timestamp without time zone"},
      {.name = "since", .has_default = true, .default_expression = "'-infinity'::date"}};
  mapper().SetCatalog(catalog);
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderValue(*r, "valid_until"), "-9223372036853775810");
  EXPECT_THAT(std::string(r->value.value_or("")), HasSubstr("since=-170999002"));
  config_.header_values = config::HeaderValues::kText;
  mapper_.reset();
  mapper().SetCatalog(catalog);
  r = Map();
  EXPECT_TRUE(IsPerEventError(r.status())) << r.status();
  EXPECT_THAT(Message(r.status()), AllOf(HasSubstr("column \"valid_until\" is NULL"), HasSubstr("infinity")));
  config_.header_values = config::HeaderValues::kDebezium;
  config_.fields.key = "since";
  mapper_.reset();
  mapper().SetCatalog(catalog);
  r = Map();
  EXPECT_TRUE(IsPerEventError(r.status())) << r.status();
  EXPECT_THAT(Message(r.status()), HasSubstr("column \"since\" is NULL"));
}

// --- Placement envelope ----------------------------------------------------------------------------------------

// The value becomes Debezium's envelope struct {payload, <envelope fields>}: under the string converter
// Struct.toString (null fields left out, each value as Java prints it), under json the struct's JSON (nulls
// included), and envelope fields are no headers.
TEST_F(MapperTest, EnvelopePlacementWritesTheStructAsTheValueConverterDoes) {
  config_.fields.additional = {{.column = "type", .placement = "envelope", .name = "eventType"},
                               {.column = "created_at", .placement = "envelope", .name = "created_at"},
                               {.column = "aggregatetype", .placement = "header", .name = "aggregatetype"}};
  config_.envelope_schema_name = "public.outbox.${routedByValue}.Value";
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, R"(Struct{payload={"amount": 10, "currency": "EUR"},eventType=OrderCreated,)"
                      R"(created_at=2024-05-01T12:00:00.123456Z})");
  EXPECT_EQ(HeaderNames(*r), (std::vector<std::string>{"id", "aggregatetype", "source_lsn"}));
  Set("payload", std::nullopt);
  Set("created_at", std::nullopt);
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, "Struct{eventType=OrderCreated}");

  config_.value_converter = config::Converter::kJson;
  mapper_.reset();
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, R"({"payload":null,"eventType":"OrderCreated","created_at":null})");
  Set("payload", R"({"a": "x\"y"})");
  Set("created_at", "1969-12-31 23:59:59+00");
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, R"({"payload":"{\"a\": \"x\\\"y\"}","eventType":"OrderCreated",)"
                      R"("created_at":"1969-12-31T23:59:59.000000Z"})");
  // A column the table lacks under outbox.fields.additional_if_present is left out of the struct, as in Debezium.
  config_.fields.additional.push_back({.column = "tenant", .placement = "envelope", .name = "tenant"});
  config_.fields.additional_if_present = true;
  mapper_.reset();
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, R"({"payload":"{\"a\": \"x\\\"y\"}","eventType":"OrderCreated",)"
                      R"("created_at":"1969-12-31T23:59:59.000000Z"})");
  // A NULL or blank payload under outbox.tombstone_on_empty_payload is a tombstone, not an envelope.
  config_.tombstone_on_empty_payload = true;
  mapper_.reset();
  Set("payload", " ");
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, std::nullopt);
}

// json_schema: the struct's schema, named by outbox.envelope_schema_name with the route value of the first record
// that had this payload schema (Debezium caches it so), or of the first with this version when
// outbox.fields.schema_version is set.
TEST_F(MapperTest, EnvelopeSchemaIsNamedByTheFirstRouteValueAndVersionedByTheColumn) {
  config_.value_converter = config::Converter::kJsonSchema;
  config_.route_by = "aggregatetype";  // Debezium's default
  config_.fields.additional = {{.column = "type", .placement = "envelope", .name = "eventType"}};
  config_.envelope_schema_name = "db.public.outbox.${routedByValue}.Value";
  const std::vector<pg::ColumnCatalog> catalog = {{.name = "type", .not_null = true}, {.name = "payload"}};
  mapper().SetCatalog(catalog);
  const std::string fields = R"({"type":"struct","fields":[{"type":"string","optional":true,"name":)"
                             R"("io.debezium.data.Json","version":1,"field":"payload"},{"type":"string",)"
                             R"("optional":false,"field":"eventType"}],"optional":false,"name":)";
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, R"({"schema":)" + fields + R"("db.public.outbox.Order.Value"},"payload":{"payload":)"
                      R"("{\"amount\": 10, \"currency\": \"EUR\"}","eventType":"OrderCreated"}})");
  Set("aggregatetype", "Customer");
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(std::string(r->value.value_or("")), HasSubstr(R"("name":"db.public.outbox.Order.Value")"));
  EXPECT_EQ(r->topic, "outbox.event.Customer");

  // Versioned: an integer column; each version's first route value names it.
  relation_.columns.push_back({.flags = 0, .name = "v", .type_oid = pg::oid::kInt4});
  values_.push_back("3");
  config_.fields.schema_version = "v";
  mapper_.reset();
  mapper().SetCatalog(catalog);
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(std::string(r->value.value_or("")), HasSubstr(R"("name":"db.public.outbox.Customer.Value","version":3})"));
  Set("aggregatetype", "Order");
  Set("v", "4");
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(std::string(r->value.value_or("")), HasSubstr(R"("name":"db.public.outbox.Order.Value","version":4})"));
  Set("v", std::nullopt);
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(std::string(r->value.value_or("")), HasSubstr(R"("name":"db.public.outbox.Order.Value"},)"));
  // A version column that is not int4 stops the relay, as Debezium's getInt32 fails every record.
  relation_.columns.back().type_oid = kInt8;
  mapper().OnRelation(kOutboxOid);
  r = Map();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(r.status()), HasSubstr("column \"v\" (outbox.fields.schema_version)"));
}

// What Java prints with an identity hash code (a byte array, a VariableScaleDecimal) cannot be reproduced under the
// string converter: such an envelope field, or a bytea payload, stops the relay naming the column.
TEST_F(MapperTest, EnvelopeFieldsJavaPrintsByIdentityAreRefusedUnderTheStringConverter) {
  config_.route_by = "aggregatetype";
  config_.fields.additional = {{.column = "type", .placement = "envelope", .name = "type"}};
  SetType("type", pg::oid::kNumeric);  // unscaled: a VariableScaleDecimal struct holding a byte[]
  Set("type", "1.5");
  auto r = Map();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(r.status()), HasSubstr("column \"type\" (outbox.fields.additional, placement envelope)"));
  // A bytea's value is a ByteBuffer, whose text Java prints without an identity hash code.
  mapper_.reset();
  SetType("type", kBytea);
  Set("type", "\\x00ff");
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, "Struct{payload={\"amount\": 10, \"currency\": \"EUR\"},type=java.nio.HeapByteBuffer[pos=0 lim=2 cap=2]}");
  // A bytea payload's text is Java's only under outbox.string_converter_values: debezium.
  SetType("type", kText);
  SetType("payload", kBytea);
  Set("payload", "\\x00ff41");
  mapper().OnRelation(kOutboxOid);
  r = Map();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(r.status()), HasSubstr("column \"payload\" (outbox.fields.payload)"));
  config_.string_converter_values = config::StringValues::kDebezium;
  mapper_.reset();
  Set("type", "T");
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, "Struct{payload=java.nio.HeapByteBuffer[pos=0 lim=3 cap=3],type=T}");
  config_.string_converter_values = config::StringValues::kText;
  // Under json the bytes are base64, as JsonConverter writes them.
  config_.value_converter = config::Converter::kJson;
  mapper_.reset();
  SetType("type", kBytea);
  Set("type", "\\x00");
  Set("payload", "\\x41");
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, R"({"payload":"QQ==","type":"AA=="})");
}

// Debezium's schema of a column with a default carries it (and JsonConverter writes it for a NULL): not reproduced,
// so refused (fatal) naming the key and the column; so is a row mapped before the catalog was read.
TEST_F(MapperTest, JsonSchemaConvertersRefuseAColumnWithADefaultNamingTheKey) {
  config_.value_converter = config::Converter::kJsonSchema;
  auto r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal) << r.status();
  mapper().SetCatalog({{.name = "aggregateid", .not_null = true}, {.name = "payload", .has_default = true}});
  r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_THAT(Message(r.status()), HasSubstr("outbox.value_converter"));
  EXPECT_THAT(Message(r.status()), HasSubstr("\"payload\""));
  EXPECT_THAT(Message(r.status()), HasSubstr("has a default"));
  // A type Debezium has no schema for: refused like json refuses it.
  mapper().SetCatalog({{.name = "payload"}});
  SetType("payload", 424242);
  mapper().OnRelation(kOutboxOid);
  r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_THAT(Message(r.status()), HasSubstr("outbox.value_converter"));
}

// A column the catalog no longer has (dropped since the row was written, the catalog read again at a replay or a
// restart): Debezium's Relation handler gives it an optional schema with no default, and so does the relay; the
// row before the drop is written, not refused. Where its declared type is needed (a propagated source type), the
// relay refuses it naming the column. Catches a missing column refused (as before), and one written required.
TEST_F(MapperTest, JsonSchemaConvertersGiveAColumnTheCatalogNoLongerHasAnOptionalSchema) {
  config_.key_converter = config::Converter::kJsonSchema;
  config_.value_converter = config::Converter::kJsonSchema;
  mapper().SetCatalog({{.name = "id", .not_null = true}, {.name = "payload", .not_null = true}});
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->key, R"({"schema":{"type":"string","optional":true},"payload":"order-42"})");
  EXPECT_THAT(r->value.value_or(""), HasSubstr(R"("optional":false)"));  // payload: still in the catalog, NOT NULL
  config_.propagate_source_type_columns = ".*";
  mapper_.reset();
  mapper().SetCatalog({{.name = "id", .not_null = true}, {.name = "payload", .not_null = true}});
  r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_THAT(Message(r.status()), HasSubstr("column \"aggregateid\""));
  EXPECT_THAT(Message(r.status()), HasSubstr("not in the catalog"));
}

TEST_F(MapperTest, BytesConvertersWriteByteaAndRefuseOtherColumnsNamingTheKey) {
  config_.value_converter = config::Converter::kBytes;
  SetType("payload", kBytea);
  Set("payload", "\\x00ff41");
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, std::string("\0\xff" "A", 3));
  config_.key_converter = config::Converter::kBytes;  // aggregateid is text: Kafka Connect would fail too
  mapper_.reset();
  r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(r.status()), HasSubstr("outbox.key_converter"));
  EXPECT_THAT(Message(r.status()), HasSubstr("\"aggregateid\""));
}

// outbox.value_converter_binary / key_converter_binary (Debezium's BinaryDataConverter): a bytea payload or key as its
// bytes whatever the delegate converter; a payload or key of another type through the delegate (json here).
TEST_F(MapperTest, BinaryConvertersWriteByteaAsItsBytesAndOtherColumnsThroughTheDelegate) {
  config_.value_converter = config::Converter::kJson;
  config_.value_converter_binary = true;
  config_.key_converter = config::Converter::kJson;
  config_.key_converter_binary = true;
  SetType("payload", kBytea);
  Set("payload", "\\x00ff41");
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, std::string("\0\xff" "A", 3));
  EXPECT_EQ(r->key, R"("order-42")");  // aggregateid is text: the delegate's JSON string
  config_.value_converter_binary = false;  // the delegate alone: JsonConverter's base64 string
  mapper_.reset();
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, R"("AP9B")");
  config_.value_converter_binary = true;
  SetType("payload", kJsonb);
  Set("payload", R"({"a": 1})");
  mapper_.reset();
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, R"("{\"a\": 1}")");
}

// outbox.fields.tracing_span_context: the column's java.util.Properties text gives the W3C headers.
TEST_F(MapperTest, TraceContextColumnGivesTraceparentAndTracestateHeaders) {
  relation_.columns.push_back({.flags = 0, .name = "tracingspancontext", .type_oid = kText});
  values_.push_back("#Thu Dec 03 21:00:00 UTC 2026\ntraceparent=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\n"
                    "tracestate=congo\\=t61rcWkgMzE\n");
  config_.fields.tracing_span_context = "tracingspancontext";
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  // Ahead of the id, where Debezium's tracing adds them.
  EXPECT_EQ(HeaderNames(*r), (std::vector<std::string>{"traceparent", "tracestate", "id", "source_lsn"}));
  EXPECT_EQ(HeaderValue(*r, "traceparent"), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  EXPECT_EQ(HeaderValue(*r, "tracestate"), "congo=t61rcWkgMzE");
  // As OpenTelemetry's W3C propagator writes them back (trace_context_test.cc has the cases).
  Set("tracingspancontext", "traceparent=01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-ff-x\n"
                            "tracestate=a\\=1 , b\\=2\n");
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderValue(*r, "traceparent"), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-03");
  EXPECT_EQ(HeaderValue(*r, "tracestate"), "a=1,b=2");
  // NULL, text without a traceparent, or one the propagator refuses: no trace headers.
  Set("tracingspancontext", std::nullopt);
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderNames(*r), (std::vector<std::string>{"id", "source_lsn"}));
  Set("tracingspancontext", "tracestate=a");
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderNames(*r), (std::vector<std::string>{"id", "source_lsn"}));
  Set("tracingspancontext", "traceparent=00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01\n");
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderNames(*r), (std::vector<std::string>{"id", "source_lsn"}));
}

// outbox.header_values json / json_schema (JsonConverter as the header converter): the id and the additional fields
// as the JSON of Debezium's values, with their column schemas under json_schema (optional from the catalog, a NULL
// as a null payload); the headers Debezium adds as strings with Schema.STRING_SCHEMA (__debezium.context.*, the
// tracing SMT's traceparent and tracestate) as required strings.
TEST_F(MapperTest, JsonHeaderValuesAreWhatJsonConverterWritesAsHeaders) {
  relation_.columns.push_back({.flags = 0, .name = "tracingspancontext", .type_oid = kText});
  values_.push_back("traceparent=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\ntracestate=a\\=1\n");
  config_.fields.tracing_span_context = "tracingspancontext";
  config_.fields.additional = {{.column = "created_at", .placement = "header", .name = "at"}};
  config_.debezium_context_logical_name = "shop";
  config_.header_values = config::HeaderValues::kJsonSchema;
  mapper().SetRunId("r");
  mapper().SetCatalog({{.name = "id", .not_null = true}, {.name = "created_at"}});
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string str = R"({"schema":{"type":"string","optional":false},"payload":)";
  EXPECT_EQ(HeaderValue(*r, "__debezium.context.connectorLogicalName"), str + R"("shop"})");
  EXPECT_EQ(HeaderValue(*r, "id"), R"({"schema":{"type":"string","optional":false,"name":"io.debezium.data.Uuid",)"
                                   R"("version":1},"payload":")" + std::string(kEventId) + "\"}");
  EXPECT_EQ(HeaderValue(*r, "at"), R"({"schema":{"type":"string","optional":true,"name":)"
                                   R"("io.debezium.time.ZonedTimestamp","version":1},"payload":)"
                                   R"("2024-05-01T12:00:00.123456Z"})");
  EXPECT_EQ(HeaderValue(*r, "traceparent"), str + R"("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"})");
  EXPECT_EQ(HeaderValue(*r, "tracestate"), str + R"("a=1"})");
  Set("created_at", std::nullopt);
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderValue(*r, "at"), R"({"schema":{"type":"string","optional":true,"name":)"
                                   R"("io.debezium.time.ZonedTimestamp","version":1},"payload":null})");
  config_.header_values = config::HeaderValues::kJson;
  mapper_.reset();
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderValue(*r, "id"), "\"" + std::string(kEventId) + "\"");
  EXPECT_EQ(HeaderValue(*r, "at"), "null");
  EXPECT_EQ(HeaderValue(*r, "tracestate"), R"("a=1")");
}

// An enum column (a type OID of its own) in a header or the envelope is Debezium's io.debezium.data.Enum: its label
// as text, its schema listing the type's labels, as the catalog has them; without the catalog's labels it is refused
// naming the column. A NULL in it with outbox.null_as_column_default gives its default label.
TEST_F(MapperTest, AnEnumColumnIsDebeziumsEnumWithTheCatalogsLabels) {
  constexpr uint32_t kOrderStatus = 16500;
  relation_.columns.push_back({.flags = 0, .name = "status", .type_oid = kOrderStatus});
  values_.push_back("shipped");
  const pg::ColumnCatalog status = {.name = "status", .type_oid = kOrderStatus, .type_name = "order_status",
                                    .enum_labels = "new,shipped"};
  config_.fields.additional = {{.column = "status", .placement = "header", .name = "status"}};
  config_.header_values = config::HeaderValues::kDebezium;
  EXPECT_TRUE(mapper().NeedsCatalog());
  mapper().SetCatalog({{.name = "status", .type_oid = kOrderStatus, .type_name = "order_status"}});  // no labels
  auto r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(Message(r.status()), HasSubstr("column \"status\" (outbox.fields.additional)"));
  EXPECT_THAT(Message(r.status()), HasSubstr("type OID 16500"));
  mapper().SetCatalog({status});
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderValue(*r, "status"), "shipped");

  config_.header_values = config::HeaderValues::kJsonSchema;
  mapper_.reset();
  mapper().SetCatalog({{.name = "id", .not_null = true}, status});
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderValue(*r, "status"), R"({"schema":{"type":"string","optional":true,"name":"io.debezium.data.Enum",)"
                                       R"("version":1,"parameters":{"allowed":"new,shipped"}},"payload":"shipped"})");

  config_.header_values = config::HeaderValues::kText;
  config_.fields.additional = {{.column = "status", .placement = "envelope", .name = "status"}};
  config_.value_converter = config::Converter::kJsonSchema;
  config_.envelope_schema_name = "public.outbox.${routedByValue}.Value";
  config_.null_as_column_default = true;
  pg::ColumnCatalog with_default = status;
  with_default.has_default = true;
  with_default.default_expression = "'new'::order_status";
  mapper_.reset();
  mapper().SetCatalog({{.name = "payload"}, with_default});
  Set("status", std::nullopt);
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->value.has_value());
  EXPECT_THAT(*r->value, HasSubstr(R"({"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,)"
                                   R"("parameters":{"allowed":"new,shipped"},"default":"new","field":"status"})"));
  EXPECT_THAT(*r->value, HasSubstr(R"("status":"new")"));
}

// outbox.event_converting_failure_handling_mode: an enum array with a NULL element, which Debezium's converter fails
// on, is a per-event error naming the column under fail; under warn and skip the header is null (SimpleHeaderConverter:
// no value), or a NOT NULL column's stays an error.
TEST_F(MapperTest, AValueDebeziumsConverterFailsOnIsNullUnderWarnAndAnErrorUnderFail) {
  constexpr uint32_t kFlags = 16501;
  relation_.columns.push_back({.flags = 0, .name = "flags", .type_oid = kFlags});
  values_.push_back("{urgent,NULL}");
  pg::ColumnCatalog flags = {.name = "flags", .type_oid = kFlags, .type_name = "_order_flag",
                             .element_enum_labels = "gift,urgent"};
  config_.fields.additional = {{.column = "flags", .placement = "header", .name = "flags"}};
  config_.header_values = config::HeaderValues::kDebezium;
  mapper().SetCatalog({flags});
  auto r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsPerEventError(r.status()));
  EXPECT_THAT(Message(r.status()), HasSubstr("column \"flags\""));
  ExpectNullHeaderUnder({config::ConvertingFailure::kWarn, config::ConvertingFailure::kSkip}, flags, "flags");
  Set("flags", "{urgent}");  // no NULL element: as ever
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderValue(*r, "flags"), R"(["urgent"])");
  Set("flags", "{urgent,NULL}");
  flags.not_null = true;
  mapper().SetCatalog({flags});
  r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsPerEventError(r.status()));
}

// A timestamp past 2262 under outbox.time_precision_mode nanoseconds: Debezium's converter gives null whatever its
// event.converting.failure.handling.mode (fail included), so the header is null; a NOT NULL column's is an error.
TEST_F(MapperTest, ANanosecondOverflowIsNullUnderEveryFailureModeButAnErrorWhenNotNull) {
  relation_.columns.push_back({.flags = 0, .name = "at", .type_oid = 1114});
  values_.push_back("2263-01-01 00:00:00");
  pg::ColumnCatalog at = {.name = "at", .type_oid = 1114, .type_name = "timestamp"};
  config_.fields.additional = {{.column = "at", .placement = "header", .name = "at"}};
  config_.header_values = config::HeaderValues::kDebezium;
  config_.time_precision_mode = config::TimePrecision::kNanoseconds;
  ExpectNullHeaderUnder(
      {config::ConvertingFailure::kFail, config::ConvertingFailure::kWarn, config::ConvertingFailure::kSkip}, at, "at");
  Set("at", "2262-04-11 23:47:16.854775");  // the last microsecond a long of nanoseconds holds
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderValue(*r, "at"), "9223372036854775000");
  Set("at", "2263-01-01 00:00:00");
  at.not_null = true;
  mapper().SetCatalog({at});
  r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsPerEventError(r.status()));
}

// A column of a domain type (its own type OID in the Relation message, and no modifier) is read as Debezium reads
// it: as the domain's root type under the domain's modifier, so a header of a domain over numeric(10,2) is the one
// a numeric(10,2) column gives; without the catalog's word that it is a domain it is refused naming the type OID.
// Debezium reads no default of a domain column: a NULL stays NULL and the schema carries no default.
TEST_F(MapperTest, ADomainColumnIsItsRootTypeUnderTheDomainsModifierWithoutADefault) {
  constexpr uint32_t kNumeric = 1700;
  constexpr uint32_t kAmountDomain = 16552;
  constexpr int32_t kNumeric10And2 = ((10 << 16) | 2) + 4;
  relation_.columns.push_back({.flags = 0, .name = "amount", .type_oid = kNumeric,
                               .type_modifier = kNumeric10And2});
  values_.push_back("12.5");
  config_.fields.additional = {{.column = "amount", .placement = "header", .name = "amount"}};
  config_.header_values = config::HeaderValues::kJsonSchema;
  config_.null_as_column_default = true;
  const pg::ColumnCatalog plain = {.name = "amount", .type_oid = kNumeric, .type_modifier = kNumeric10And2,
                                   .type_name = "numeric"};
  mapper().SetCatalog({{.name = "id", .not_null = true}, plain});
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  const std::optional<std::string> as_numeric = HeaderValue(*r, "amount");
  ASSERT_TRUE(as_numeric.has_value());
  EXPECT_THAT(*as_numeric, HasSubstr(R"("scale":"2")"));

  relation_.columns.back().type_oid = kAmountDomain;
  relation_.columns.back().type_modifier = -1;
  pg::ColumnCatalog domain = {.name = "amount", .has_default = true, .default_expression = "1.00",
                              .type_oid = kAmountDomain, .type_name = "amount"};
  mapper_.reset();
  mapper().SetCatalog({{.name = "id", .not_null = true}, domain});
  r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(Message(r.status()), HasSubstr("column \"amount\" (outbox.fields.additional)"));
  EXPECT_THAT(Message(r.status()), HasSubstr("type OID 16552"));

  domain.domain_root_oid = kNumeric;
  domain.domain_root_modifier = kNumeric10And2;
  mapper_.reset();
  mapper().SetCatalog({{.name = "id", .not_null = true}, domain});
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderValue(*r, "amount"), as_numeric);
  Set("amount", std::nullopt);
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  const std::optional<std::string> null_amount = HeaderValue(*r, "amount");
  ASSERT_TRUE(null_amount.has_value());
  EXPECT_THAT(*null_amount, HasSubstr(R"("payload":null)"));
  EXPECT_THAT(*null_amount, Not(HasSubstr("default")));
}

TEST_F(MapperTest, AMissingTraceContextColumnIsFatalUnlessOnlyIfPresent) {
  config_.fields.tracing_span_context = "tracingspancontext";
  auto r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(r.status()), HasSubstr("outbox.fields.tracing_span_context"));
  config_.fields.tracing_span_context_if_present = true;
  mapper_.reset();
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderNames(*r), (std::vector<std::string>{"id", "source_lsn"}));
}

// outbox.debezium_context_logical_name: Debezium's four context headers, first, with the run id the caller set.
TEST_F(MapperTest, DebeziumContextHeadersComeFirstWhenALogicalNameIsSet) {
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderNames(*r), (std::vector<std::string>{"id", "source_lsn"}));  // off by default
  config_.debezium_context_logical_name = "shop";
  mapper_.reset();
  const std::string run = FormatUuidV7(1796340931981, 0xabc, 0x0123456789abcdefULL);
  mapper().SetRunId(run);
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderNames(*r), (std::vector<std::string>{"__debezium.context.connectorLogicalName",
                                                       "__debezium.context.taskId", "__debezium.context.connectorName",
                                                       "__debezium.context.runId", "id", "source_lsn"}));
  EXPECT_EQ(HeaderValue(*r, "__debezium.context.connectorLogicalName"), "shop");
  EXPECT_EQ(HeaderValue(*r, "__debezium.context.taskId"), "0");
  EXPECT_EQ(HeaderValue(*r, "__debezium.context.connectorName"), "postgresql");
  EXPECT_EQ(HeaderValue(*r, "__debezium.context.runId"), run);
}

// RFC 9562's layout: 48 bits of milliseconds, version 7, 12 random bits, variant 10, 62 random bits.
TEST(FormatUuidV7, PutsTheTimeVersionAndVariantWhereRfc9562Says) {
  EXPECT_EQ(FormatUuidV7(0x017F22E279B0, 0xCC3, 0x18C4DC0C0C07398FULL), "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
  EXPECT_EQ(FormatUuidV7(0, ~0ULL, ~0ULL), "00000000-0000-7fff-bfff-ffffffffffff");
  EXPECT_EQ(FormatUuidV7(0, 0, 0), "00000000-0000-7000-8000-000000000000");
}

// Placement partition (Debezium's column:partition): an integer column's value is the record's partition, no
// header; NULL leaves it to the partitioner; a negative value is a per-event error; a column of another type stops
// the relay when the table's layout arrives, naming it (Debezium's getInt32 takes only int4).
TEST_F(MapperTest, AColumnPlacedAsThePartitionSetsTheRecordsPartition) {
  relation_.columns.push_back({.flags = 0, .name = "shard", .type_oid = 23});  // integer
  values_.push_back("2");
  config_.fields.additional = {config::AdditionalField{.column = "type", .placement = "header", .name = "eventType"},
                               config::AdditionalField{.column = "shard", .placement = "partition", .name = "shard"}};
  config_.header_values = config::HeaderValues::kDebezium;
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->partition, 2);
  EXPECT_EQ(HeaderNames(*r), (std::vector<std::string>{"id", "eventType", "source_lsn"}));
  Set("shard", std::nullopt);
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->partition, std::nullopt);
  Set("shard", "-1");
  r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsPerEventError(r.status())) << r.status();
  EXPECT_THAT(Message(r.status()), HasSubstr("column \"shard\" (placement partition): \"-1\" is no partition"));
  SetType("shard", 20);  // bigint
  mapper_.reset();
  r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(r.status()), HasSubstr("column \"shard\" (outbox.fields.additional, placement partition)"));
}

// outbox.fields.additional_if_present (Debezium's table.field.additional.missing=ignore): a missing column's header
// is left out, the others stay.
TEST_F(MapperTest, AMissingAdditionalColumnIsLeftOutWhenOnlyIfPresent) {
  config_.fields.additional = {config::AdditionalField{.column = "tenant", .placement = "header", .name = "tenant"},
                               config::AdditionalField{.column = "type", .placement = "header", .name = "eventType"}};
  config_.fields.additional_if_present = true;
  for (config::HeaderValues values : {config::HeaderValues::kText, config::HeaderValues::kDebezium}) {
    config_.header_values = values;
    mapper_.reset();
    auto r = Map();
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(HeaderNames(*r), (std::vector<std::string>{"id", "eventType", "source_lsn"}));
    EXPECT_EQ(HeaderValue(*r, "eventType"), "OrderCreated");
    EXPECT_EQ(HeaderNames(mapper().Original(kCommitLsn, kCommitTimeMs)),
              (std::vector<std::string>{"id", "eventType", "source_lsn"}));
  }
}

TEST_F(MapperTest, MissingTimestampColumnIsFatal) {
  config_.fields.timestamp = "occurred_at";
  auto r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(r.status()), HasSubstr("\"occurred_at\""));
}

TEST_F(MapperTest, TupleWithTheWrongColumnCountIsDataLoss) {
  ASSERT_TRUE(Map().ok());
  values_.pop_back();
  auto r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_FALSE(IsPerEventError(r.status()));
}

TEST_F(MapperTest, ColumnNotInTextFormIsDataLoss) {
  tuple_ = Tuple();
  tuple_.columns[Index("payload")].kind = pg::ColumnValue::Kind::kBinary;
  auto r = mapper().Map(relation_, tuple_, kCommitLsn, kCommitTimeMs);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(Message(r.status()), HasSubstr("\"payload\""));
}

// --- Relations -------------------------------------------------------------------------------------------------

TEST_F(MapperTest, IsOutboxMatchesSchemaAndTable) {
  pg::Relation r = OutboxRelation();
  EXPECT_TRUE(mapper().IsOutbox(r));
  r.relname = "outbox2";
  EXPECT_FALSE(mapper().IsOutbox(r));
  r = OutboxRelation();
  r.nspname = "app";
  EXPECT_FALSE(mapper().IsOutbox(r));
  r.nspname = "";  // pg_catalog
  EXPECT_FALSE(mapper().IsOutbox(r));
}

TEST(OutboxMapper, UnqualifiedTableMeansPublic) {
  config::OutboxConfig config;
  config.table = "outbox";
  OutboxMapper mapper(config);
  EXPECT_TRUE(mapper.IsOutbox(OutboxRelation()));
}

TEST(OutboxMapper, IsOutboxHonoursAConfiguredSchema) {
  config::OutboxConfig config;
  config.table = "app.events";
  OutboxMapper mapper(config);
  pg::Relation r = OutboxRelation();
  EXPECT_FALSE(mapper.IsOutbox(r));
  r.nspname = "app";
  r.relname = "events";
  EXPECT_TRUE(mapper.IsOutbox(r));
}

TEST(OutboxMapper, EmptyNspnameMeansPgCatalog) {
  config::OutboxConfig config;
  config.table = "pg_catalog.outbox";
  OutboxMapper mapper(config);
  pg::Relation r = OutboxRelation();
  r.nspname = "";
  EXPECT_TRUE(mapper.IsOutbox(r));
  r.nspname = "public";
  EXPECT_FALSE(mapper.IsOutbox(r));
}

TEST_F(MapperTest, OnRelationRebindsAfterAReorderedRelation) {
  auto first = Map();
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->topic, "outbox.event.OrderCreated");

  // Same OID, same column count, another order (the table was recreated with its columns in a new order).
  std::reverse(relation_.columns.begin(), relation_.columns.end());
  std::reverse(values_.begin(), values_.end());
  mapper().OnRelation(relation_.oid);
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->topic, "outbox.event.OrderCreated");
  EXPECT_EQ(r->event_id, kEventId);
  EXPECT_EQ(*r->key, "order-42");
  EXPECT_EQ(*r->value, R"({"amount": 10, "currency": "EUR"})");
}

TEST_F(MapperTest, OnRelationRebindsAfterAColumnIsAdded) {
  ASSERT_TRUE(Map().ok());
  const pg::RelationColumn tenant{.flags = 0, .name = "tenant", .type_oid = kText};
  relation_.columns.insert(relation_.columns.begin() + 1, tenant);
  values_.insert(values_.begin() + 1, "acme");
  mapper().OnRelation(relation_.oid);
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->topic, "outbox.event.OrderCreated");
  EXPECT_EQ(*r->key, "order-42");
}

TEST_F(MapperTest, OnRelationRebindsToAMissingColumnAsFatal) {
  ASSERT_TRUE(Map().ok());
  relation_.columns[Index("payload")].name = "body";
  mapper().OnRelation(relation_.oid);
  auto r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(r.status()), HasSubstr("\"payload\""));
}

// --- Pure helpers ----------------------------------------------------------------------------------------------

TEST(IsLegalTopicName, AcceptsKafkaLegalNames) {
  for (const std::string& name :
       {std::string("a"), std::string("Z"), std::string("0"), std::string("outbox.event.OrderCreated"),
        std::string("a-b_c.d"), std::string("..."), std::string("_"), std::string("-"), std::string(249, 'x')}) {
    EXPECT_TRUE(IsLegalTopicName(name)) << name;
  }
}

TEST(IsLegalTopicName, RejectsIllegalNames) {
  using namespace std::string_view_literals;
  for (std::string_view name : {""sv, "."sv, ".."sv, "a b"sv, "a/b"sv, "a:b"sv, "a\\b"sv, "é"sv, "a\0b"sv, "a\nb"sv,
                                "a*"sv, "${routedByValue}"sv}) {
    EXPECT_FALSE(IsLegalTopicName(name)) << name;
  }
  const std::string too_long(250, 'x');
  EXPECT_FALSE(IsLegalTopicName(too_long));
}

TEST(RouteTopic, DefaultTemplateAppendsTheValue) {
  config::OutboxConfig config;
  EXPECT_EQ(RouteTopic(config, "OrderCreated"), "outbox.event.OrderCreated");
  EXPECT_EQ(RouteTopic(config, ""), "outbox.event.");
}

TEST(RouteTopic, TemplateWithoutPlaceholderIsConstant) {
  config::OutboxConfig config;
  config.route_topic = "all.events";
  EXPECT_EQ(RouteTopic(config, "OrderCreated"), "all.events");
}

TEST(RouteTopic, DebeziumRegexReplacementRewritesAMatchingValue) {
  config::OutboxConfig config;
  config.route_topic_regex = "(.*)Created";
  config.route_topic_replacement = "created.$1";
  EXPECT_EQ(RouteTopic(config, "OrderCreated"), "created.Order");
  EXPECT_EQ(RouteTopic(config, "Created"), "created.");
}

TEST(RouteTopic, DebeziumRegexThatDoesNotMatchTheWholeValueGivesTheBareValue) {
  config::OutboxConfig config;
  config.route_topic_regex = "(.*)Created";
  config.route_topic_replacement = "created.$1";
  EXPECT_EQ(RouteTopic(config, "OrderShipped"), "OrderShipped");
  EXPECT_EQ(RouteTopic(config, "OrderCreatedLate"), "OrderCreatedLate");  // a partial match is no match
}

TEST(RouteTopic, DebeziumReplacementMayUseTheRoutedByValuePlaceholder) {
  config::OutboxConfig config;
  config.route_topic_regex = "(?<routedByValue>.*)";  // Java forms: ${name} names a group
  config.route_topic_replacement = "outbox.event.${routedByValue}";
  EXPECT_EQ(RouteTopic(config, "Order"), "outbox.event.Order");
}

TEST(ParseTimestampMillis, ReadsUtcTimestamptz) {
  EXPECT_EQ(*ParseTimestampMillis("2024-05-01 12:00:00.123456+00", true), 1714564800123);
  EXPECT_EQ(*ParseTimestampMillis("1970-01-01 00:00:00+00", true), 0);
}

TEST(ParseTimestampMillis, AppliesOffsets) {
  EXPECT_EQ(*ParseTimestampMillis("2024-05-01 12:00:00+05:30", true), 1714564800000 - 19800000);
  EXPECT_EQ(*ParseTimestampMillis("2024-05-01 12:00:00-03", true), 1714564800000 + 3 * 3600000);
  EXPECT_EQ(*ParseTimestampMillis("2024-05-01 12:00:00+01:02:03", true), 1714564800000 - 3723000);
  EXPECT_EQ(*ParseTimestampMillis("2024-05-01 12:00:00.5-00:30", true), 1714564800500 + 1800000);
}

TEST(ParseTimestampMillis, TimestampWithoutZoneIsUtc) {
  EXPECT_EQ(*ParseTimestampMillis("2024-05-01 12:00:00.123456", false), 1714564800123);
}

TEST(ParseTimestampMillis, HandlesLeapDays) {
  EXPECT_EQ(*ParseTimestampMillis("2024-02-29 23:59:59", false), 1709251199000);
  EXPECT_EQ(*ParseTimestampMillis("2000-02-29 00:00:00", false), 951782400000);
  EXPECT_EQ(*ParseTimestampMillis("2024-03-01 00:00:00", false) - *ParseTimestampMillis("2024-02-28 00:00:00", false),
            2 * 86400000);
  EXPECT_EQ(*ParseTimestampMillis("2023-03-01 00:00:00", false) - *ParseTimestampMillis("2023-02-28 00:00:00", false),
            86400000);
}

TEST(ParseTimestampMillis, HandlesDatesBefore1970) {
  EXPECT_EQ(*ParseTimestampMillis("1969-12-31 23:59:59", false), -1000);
  EXPECT_EQ(*ParseTimestampMillis("1969-12-31 23:59:59.999", false), -1);
  EXPECT_EQ(*ParseTimestampMillis("1969-12-31 23:59:59.0005", false), -1000);  // floor, not toward zero
  EXPECT_EQ(*ParseTimestampMillis("1900-01-01 00:00:00", false), -2208988800000);
  EXPECT_EQ(*ParseTimestampMillis("1600-03-01 00:00:00+00", true), -11670912000000);
}

TEST(ParseTimestampMillis, FractionOfOneToSixDigitsAndTruncatesMore) {
  const int64_t base = 1714564800000;
  EXPECT_EQ(*ParseTimestampMillis("2024-05-01 12:00:00.1", false), base + 100);
  EXPECT_EQ(*ParseTimestampMillis("2024-05-01 12:00:00.12", false), base + 120);
  EXPECT_EQ(*ParseTimestampMillis("2024-05-01 12:00:00.123", false), base + 123);
  EXPECT_EQ(*ParseTimestampMillis("2024-05-01 12:00:00.1239", false), base + 123);
  EXPECT_EQ(*ParseTimestampMillis("2024-05-01 12:00:00.12399", false), base + 123);
  EXPECT_EQ(*ParseTimestampMillis("2024-05-01 12:00:00.123999", false), base + 123);
  EXPECT_EQ(*ParseTimestampMillis("2024-05-01 12:00:00.0009999", false), base + 0);
  EXPECT_EQ(*ParseTimestampMillis("2024-05-01 12:00:00.9999999999", false), base + 999);
  EXPECT_EQ(*ParseTimestampMillis("2024-05-01 12:00:00.9999999+00", true), base + 999);
}

TEST(ParseTimestampMillis, RejectsGarbage) {
  for (const char* bad : {"", "garbage", "2024-05-01", "2024-05-01 12:00", "2024-05-01T12:00:00",
                          "2024-5-01 12:00:00", "24-05-01 12:00:00", "2024-13-01 12:00:00", "2024-00-01 12:00:00",
                          "2024-05-00 12:00:00", "2024-05-32 12:00:00", "2024-05-01 24:00:00", "2024-05-01 12:60:00",
                          "2024-05-01 12:00:61", "2024-05-01 12:00:00.", "2024-05-01 12:00:00.12x",
                          "2024-05-01 12:00:00 ", "infinity", "-infinity", "12024-05-01 12:00:00"}) {
    EXPECT_FALSE(ParseTimestampMillis(bad, false).ok()) << bad;
  }
  for (const char* bad : {"2024-05-01 12:00:00", "2024-05-01 12:00:00+", "2024-05-01 12:00:00+5",
                          "2024-05-01 12:00:00+05:3", "2024-05-01 12:00:00+05:30:", "2024-05-01 12:00:00 +00",
                          "2024-05-01 12:00:00Z", "2024-05-01 12:00:00+00x"}) {
    EXPECT_FALSE(ParseTimestampMillis(bad, true).ok()) << bad;
  }
}

TEST(ParseTimestampMillis, ZoneIsRejectedForTimestampWithoutZone) {
  EXPECT_FALSE(ParseTimestampMillis("2024-05-01 12:00:00+00", false).ok());
}

TEST(ParseTimestampMillis, RejectsBcDates) {
  EXPECT_FALSE(ParseTimestampMillis("0044-03-15 12:00:00 BC", false).ok());
  EXPECT_FALSE(ParseTimestampMillis("0044-03-15 12:00:00+00 BC", true).ok());
  EXPECT_FALSE(ParseTimestampMillis("0044-03-15 12:00:00.5+00 BC", true).ok());
}

TEST(ParseTimestampMillis, ErrorIsInvalidArgumentQuotingTheText) {
  auto r = ParseTimestampMillis("tomorrow", false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(r.status()), HasSubstr("\"tomorrow\""));
}

TEST(DecodeByteaHex, DecodesHexOutput) {
  EXPECT_EQ(*DecodeByteaHex("\\x"), "");
  EXPECT_EQ(*DecodeByteaHex("\\x0102ff"), std::string("\x01\x02\xff", 3));
  EXPECT_EQ(*DecodeByteaHex("\\xDEADbeef"), std::string("\xde\xad\xbe\xef", 4));
  EXPECT_EQ(*DecodeByteaHex("\\x00"), std::string(1, '\0'));
}

TEST(DecodeByteaHex, RejectsNonHexOutput) {
  for (const char* bad : {"", "\\", "x01", "0102", "\\X01", "\\x1", "\\x012", "\\x0g", "\\xg0", "\\x01 02",
                          "\\001\\002"}) {
    auto r = DecodeByteaHex(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(IsPerEventError, OnlyInvalidArgumentIsPerEvent) {
  EXPECT_TRUE(IsPerEventError(absl::InvalidArgumentError("x")));
  EXPECT_FALSE(IsPerEventError(absl::FailedPreconditionError("x")));
  EXPECT_FALSE(IsPerEventError(absl::DataLossError("x")));
  EXPECT_FALSE(IsPerEventError(absl::OkStatus()));
}

}  // namespace
}  // namespace outbox::outbox

namespace outbox::outbox {
namespace {

// --- CloudEvents (outbox.format: cloudevents) --------------------------------------------------------------------

TEST_F(MapperTest, CloudEventsFormatAddsTheBinaryModeHeaders) {
  config_.format = config::Format::kCloudEvents;
  config_.route_by = "aggregatetype";
  config_.fields.timestamp = "created_at";
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderNames(*r), (std::vector<std::string>{"id", "source_lsn", "ce_specversion", "ce_id", "ce_source",
                                                       "ce_type", "ce_time", "content-type"}));
  EXPECT_EQ(HeaderValue(*r, "ce_specversion"), "1.0");
  EXPECT_EQ(HeaderValue(*r, "ce_id"), kEventId);
  EXPECT_EQ(HeaderValue(*r, "ce_source"), "/public/outbox");
  EXPECT_EQ(HeaderValue(*r, "ce_type"), "OrderCreated") << "the type column, not the route column";
  EXPECT_EQ(HeaderValue(*r, "ce_time"), "2024-05-01T12:00:00.123Z");
  EXPECT_EQ(HeaderValue(*r, "content-type"), "application/json");
  EXPECT_EQ(r->value, R"({"amount": 10, "currency": "EUR"})") << "binary mode: the value is the data";
}

TEST_F(MapperTest, CloudEventsTimeBeforeTheEpochIsFormattedCorrectly) {
  config_.format = config::Format::kCloudEvents;
  config_.fields.timestamp = "created_at";
  Set("created_at", "1969-12-31 23:59:59.5+00");
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderValue(*r, "ce_time"), "1969-12-31T23:59:59.500Z");
}

TEST_F(MapperTest, CloudEventsTimeOfAStreamedRecordIsSetWhenItsCommitIsKnown) {
  // As the relay does for a streamed transaction: mapped before the commit (no time yet), completed at replay.
  config_.format = config::Format::kCloudEvents;
  tuple_ = Tuple();
  auto r = mapper().Map(relation_, tuple_, Lsn(0), INT64_MIN);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderValue(*r, "ce_time"), "");
  Record record = *r;
  record.timestamp_ms = 1714564800123;  // BufferedEvent::ToRecord: the commit time
  ASSERT_TRUE(mapper().CompleteEnvelope(record, "1/2").ok());
  EXPECT_EQ(HeaderValue(record, "ce_time"), "2024-05-01T12:00:00.123Z");
}

TEST_F(MapperTest, RawFormatHasNoCloudEventsHeaders) {
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(HeaderNames(*r), (std::vector<std::string>{"id", "source_lsn"}));
}

}  // namespace
}  // namespace outbox::outbox

namespace outbox::outbox {
namespace {

// --- The protobuf envelope (outbox.format: protobuf) -------------------------------------------------------------

// The record's value parsed with the generated class; an empty envelope (and a test failure) when it is not one.
v1::Envelope Envelope(const Record& r) {
  v1::Envelope e;
  if (!r.value.has_value()) {
    ADD_FAILURE() << "null value";
  } else if (!e.ParseFromArray(r.value->data(), static_cast<int>(r.value->size()))) {
    ADD_FAILURE() << "the value is not an outbox.v1.Envelope";
  }
  return e;
}

class ProtobufMapperTest : public MapperTest {
 protected:
  ProtobufMapperTest() { config_.format = config::Format::kProtobuf; }
};

TEST_F(ProtobufMapperTest, ValueIsAnEnvelopeCarryingEveryField) {
  config_.route_by = "aggregatetype";
  config_.fields.timestamp = "created_at";
  config_.fields.additional = {
      config::AdditionalField{.column = "aggregatetype", .placement = "header", .name = "aggregate"},
      config::AdditionalField{.column = "aggregateid", .placement = "header", .name = "aggregate_id"},
  };
  tuple_ = Tuple();
  auto r = mapper().Map(relation_, tuple_, kCommitLsn, kCommitTimeMs);
  ASSERT_TRUE(r.ok()) << r.status();
  const v1::Envelope e = Envelope(*r);
  EXPECT_EQ(e.id(), kEventId);
  EXPECT_EQ(e.type(), "OrderCreated");
  ASSERT_TRUE(e.has_key());
  EXPECT_EQ(e.key(), "order-42");
  EXPECT_EQ(e.route_value(), "Order");
  ASSERT_TRUE(e.has_payload());
  EXPECT_EQ(e.payload(), R"({"amount": 10, "currency": "EUR"})");
  EXPECT_EQ(e.timestamp().seconds(), 1714564800);  // 2024-05-01 12:00:00 UTC
  EXPECT_EQ(e.timestamp().nanos(), 123000000) << "milliseconds, as the record timestamp";
  EXPECT_EQ(e.source_lsn(), "16/B374D848");
  EXPECT_EQ(e.source(), "/public/outbox");
  ASSERT_EQ(e.additional_size(), 2);
  EXPECT_EQ(e.additional(0).name(), "aggregate");
  EXPECT_EQ(e.additional(0).value(), "Order");
  EXPECT_EQ(e.additional(1).name(), "aggregate_id");
  EXPECT_EQ(e.additional(1).value(), "order-42");
  // The Kafka record around it is the raw one plus content-type.
  EXPECT_EQ(r->topic, "outbox.event.Order");
  EXPECT_EQ(r->key, "order-42");
  EXPECT_EQ(r->timestamp_ms, 1714564800123);
  EXPECT_THAT(HeaderNames(*r),
              ::testing::ElementsAre("id", "aggregate", "aggregate_id", "source_lsn", "content-type"));
  EXPECT_EQ(HeaderValue(*r, "id"), kEventId);
  EXPECT_EQ(HeaderValue(*r, "content-type"), kEnvelopeContentType);
  EXPECT_EQ(r->Bytes(), r->topic.size() + r->key->size() + r->value->size() + 2 + std::string_view(kEventId).size() +
                            9 + 5 + 12 + 8 + 10 + 11 + 12 + kEnvelopeContentType.size());
}

TEST_F(ProtobufMapperTest, ByteaPayloadIsItsRawBytes) {
  SetType("payload", kBytea);
  Set("payload", "\\x00ff0a");
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  const v1::Envelope e = Envelope(*r);
  ASSERT_TRUE(e.has_payload());
  EXPECT_EQ(e.payload(), std::string("\x00\xff\x0a", 3));
}

TEST_F(ProtobufMapperTest, NullPayloadAndKeyAreAbsentNotEmpty) {
  Set("payload", std::nullopt);
  Set("aggregateid", std::nullopt);
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  const v1::Envelope e = Envelope(*r);
  EXPECT_FALSE(e.has_payload()) << "a NULL payload gives an envelope without one, not a tombstone";
  EXPECT_FALSE(e.has_key());
  EXPECT_EQ(e.id(), kEventId);
  EXPECT_EQ(r->key, std::nullopt);
}

TEST_F(ProtobufMapperTest, EmptyPayloadIsPresentAndEmpty) {
  SetType("payload", kText);
  Set("payload", "");
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  const v1::Envelope e = Envelope(*r);
  EXPECT_TRUE(e.has_payload());
  EXPECT_EQ(e.payload(), "");
}

TEST_F(ProtobufMapperTest, TombstoneOnEmptyPayloadGivesANullValueForNullAndEmptyPayloads) {
  config_.tombstone_on_empty_payload = true;
  SetType("payload", kText);
  for (std::optional<std::string> payload : {std::optional<std::string>(), std::optional<std::string>("")}) {
    Set("payload", payload);
    auto r = Map();
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE(r->value.has_value()) << (payload ? "empty" : "NULL");
    EXPECT_THAT(HeaderNames(*r), ::testing::ElementsAre("id", "source_lsn")) << "no content-type on a tombstone";
  }
  Set("payload", "x");
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Envelope(*r).payload(), "x");
}

TEST_F(ProtobufMapperTest, TimestampIsTheCommitTimeWithoutATimestampColumn) {
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  const v1::Envelope e = Envelope(*r);
  EXPECT_EQ(e.timestamp().seconds(), kCommitTimeMs / 1000);
  EXPECT_EQ(e.timestamp().nanos(), 0);
}

TEST_F(ProtobufMapperTest, TimestampBeforeTheEpochHasPositiveNanos) {
  config_.fields.timestamp = "created_at";
  Set("created_at", "1969-12-31 23:59:59.5+00");
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  const v1::Envelope e = Envelope(*r);
  EXPECT_EQ(e.timestamp().seconds(), -1);
  EXPECT_EQ(e.timestamp().nanos(), 500000000);
}

TEST_F(ProtobufMapperTest, SuccessiveMapsDoNotLeakFieldsOfThePreviousEvent) {
  config_.fields.additional = {config::AdditionalField{.column = "aggregatetype", .placement = "header", .name = "agg"}};
  ASSERT_TRUE(Map().ok());
  Set("id", "second");
  Set("type", "OrderShipped");
  Set("aggregateid", std::nullopt);
  Set("aggregatetype", std::nullopt);
  Set("payload", std::nullopt);
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  const v1::Envelope e = Envelope(*r);
  EXPECT_EQ(e.id(), "second");
  EXPECT_EQ(e.type(), "OrderShipped");
  EXPECT_FALSE(e.has_key());
  EXPECT_FALSE(e.has_payload());
  ASSERT_EQ(e.additional_size(), 1);
  EXPECT_EQ(e.additional(0).name(), "agg");
  EXPECT_FALSE(e.additional(0).has_value());
}

TEST_F(ProtobufMapperTest, StreamedRecordGetsItsCommitLsnAndTimeWhenCompleted) {
  // As the relay does for a streamed transaction: mapped before the commit is known, buffered, completed at replay.
  tuple_ = Tuple();
  auto r = mapper().Map(relation_, tuple_, Lsn(0), INT64_MIN);
  ASSERT_TRUE(r.ok()) << r.status();
  Record record = *r;
  const std::string buffered(*record.value);
  record.value = buffered;
  record.timestamp_ms = kCommitTimeMs + 7;  // BufferedEvent::ToRecord: the commit time
  ASSERT_TRUE(mapper().CompleteEnvelope(record, "16/B374D848").ok());
  const v1::Envelope e = Envelope(record);
  EXPECT_EQ(e.source_lsn(), "16/B374D848");
  EXPECT_EQ(e.timestamp().seconds(), kCommitTimeMs / 1000);
  EXPECT_EQ(e.timestamp().nanos(), 7000000);
  EXPECT_EQ(e.id(), kEventId);
  EXPECT_EQ(e.payload(), R"({"amount": 10, "currency": "EUR"})");
}

TEST_F(MapperTest, CompleteEnvelopeLeavesOtherFormatsAlone) {
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  Record record = *r;
  ASSERT_TRUE(mapper().CompleteEnvelope(record, "1/2").ok());
  EXPECT_EQ(record.value, R"({"amount": 10, "currency": "EUR"})");
}

TEST_F(ProtobufMapperTest, MissingTypeColumnIsFatal) {
  relation_.columns.erase(relation_.columns.begin() + Index("type"));
  values_.erase(values_.begin() + 3);
  config_.route_by = "aggregatetype";
  auto r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(r.status()), HasSubstr("outbox.fields.type"));
}

TEST_F(ProtobufMapperTest, LogicalMessageGivesTheSameEnvelopeAsARow) {
  config_.fields.additional = {config::AdditionalField{.column = "tenant", .placement = "header", .name = "tenant"}};
  auto r = mapper().MapMessage(
      R"({"id":"m-1","aggregatetype":"Order","aggregateid":"order-7","type":"OrderCreated",)"
      R"("payload": {"b": [1, 2.50]} ,"tenant":"acme","created_at":"ignored"})",
      kCommitLsn, kCommitTimeMs);
  ASSERT_TRUE(r.ok()) << r.status();
  const v1::Envelope e = Envelope(*r);
  EXPECT_EQ(e.id(), "m-1");
  EXPECT_EQ(e.type(), "OrderCreated");
  EXPECT_EQ(e.key(), "order-7");
  EXPECT_EQ(e.route_value(), "OrderCreated");
  EXPECT_EQ(e.payload(), R"({"b": [1, 2.50]})") << "the JSON value's exact source bytes";
  EXPECT_EQ(e.timestamp().seconds(), kCommitTimeMs / 1000);
  EXPECT_EQ(e.source_lsn(), "16/B374D848");
  ASSERT_EQ(e.additional_size(), 1);
  EXPECT_EQ(e.additional(0).value(), "acme");
  EXPECT_EQ(r->topic, "outbox.event.OrderCreated");

  auto text = mapper().MapMessage(R"({"id":"m-2","type":"T","payload":"caf\u00e9"})", kCommitLsn, kCommitTimeMs);
  ASSERT_TRUE(text.ok()) << text.status();
  const v1::Envelope t = Envelope(*text);
  EXPECT_EQ(t.payload(), "café") << "a string payload is its decoded text";
  EXPECT_FALSE(t.has_key());
  EXPECT_FALSE(t.additional(0).has_value());
}

// --- outbox.expand_json_payload ----------------------------------------------------------------------------------

class ExpandMapperTest : public MapperTest {
 protected:
  ExpandMapperTest() {
    config_.expand_json_payload = true;
    Set("payload", R"({"a": 1, "b": [1, 2], "c": null})");
  }
  // A json_schema value converter, with the catalog it needs.
  void JsonSchemaValues() {
    config_.value_converter = config::Converter::kJsonSchema;
    mapper().SetCatalog({{.name = "id", .not_null = true}, {.name = "aggregatetype", .not_null = true},
                         {.name = "aggregateid", .not_null = true}, {.name = "type", .not_null = true},
                         {.name = "payload"}, {.name = "created_at", .not_null = true}});
  }
};

// The record's value is the expanded payload as the value converter writes a struct.
TEST_F(ExpandMapperTest, TheValueIsTheExpandedPayloadAsTheConverterWritesIt) {
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, "Struct{a=1,b=[1, 2]}");
  config_.value_converter = config::Converter::kJson;
  mapper_.reset();
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, R"({"a":1,"b":[1,2]})");
  mapper_.reset();
  JsonSchemaValues();
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, R"({"schema":{"type":"struct","fields":[{"type":"int32","optional":true,"field":"a"},)"
                      R"({"type":"array","items":{"type":"int32","optional":true},"optional":true,"field":"b"}],)"
                      R"("optional":true,"name":"payload"},"payload":{"a":1,"b":[1,2]}})");
  EXPECT_EQ(r->key, "order-42");
}

// Text that is not expanded stays as the converter writes a string, with the column's schema; a top-level [] loses
// its schema (JsonConverter then writes a schemaless string).
TEST_F(ExpandMapperTest, APayloadThatIsNotExpandedIsWrittenAsItsText) {
  SetType("payload", kText);
  Set("payload", "not json");
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, "not json");
  mapper_.reset();
  JsonSchemaValues();
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, R"({"schema":{"type":"string","optional":true},"payload":"not json"})");
  Set("payload", "[]");
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, R"({"schema":null,"payload":"[]"})");
  // A bytea payload is not a string to Debezium: never expanded.
  ByteaPayloadAndBigintKey("7");
  Set("payload", "\\x7b7d");  // {}
  config_.value_converter = config::Converter::kString;
  mapper_.reset();
  r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, "{}");
}

// A payload whose value does not fit the schema inferred from it: JsonConverter fails on it (a per-event error
// naming the event and the LSN), StringConverter writes the text.
TEST_F(ExpandMapperTest, APayloadJsonConverterFailsOnIsAPerEventErrorButStringConverterWritesItsText) {
  Set("payload", "[1, 2]");
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, "[1, 2]");
  config_.value_converter = config::Converter::kJson;
  mapper_.reset();
  r = Map();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsPerEventError(r.status())) << r.status();
  EXPECT_THAT(Message(r.status()), HasSubstr("outbox.expand_json_payload"));
  EXPECT_THAT(Message(r.status()), HasSubstr(std::string("event id=") + kEventId + " at LSN 16/B374D848"));
  Set("payload", R"({"a": 12345678901234567890})");
  r = Map();
  EXPECT_TRUE(IsPerEventError(r.status())) << r.status();
}

// A blank payload is never JSON: outbox.tombstone_on_empty_payload still makes it a tombstone.
TEST_F(ExpandMapperTest, ABlankPayloadIsStillATombstone) {
  config_.tombstone_on_empty_payload = true;
  SetType("payload", kText);
  Set("payload", "  ");
  auto r = Map();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, std::nullopt);
}

}  // namespace
}  // namespace outbox::outbox
