// Debezium's column mappers as the relay applies them (outbox/column_mapper.h): which rule Debezium picks for a
// column, what it does to the value, and the byte-level pieces (Java's serialization of a String, String.substring in
// UTF-16 code units, the digests). The side-by-side tests in tests/config/debezium compare whole records with
// Debezium's.
#include "outbox/column_mapper.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pg/type_oids.h"

namespace outbox::outbox {
namespace {

using ::testing::HasSubstr;
using Kind = config::ColumnMapperRule::Kind;

config::ColumnMapperRule Rule(Kind kind, std::string columns, int64_t chars = 0, std::string algorithm = "",
                              std::string salt = "") {
  std::string key = "outbox.column_mappers.";
  switch (kind) {
    case Kind::kTruncate: key += "truncate.to." + std::to_string(chars) + ".chars"; break;
    case Kind::kMask: key += "mask.with." + std::to_string(chars) + ".chars"; break;
    case Kind::kHash: key += "mask.hash." + algorithm + ".with.salt." + salt; break;
    case Kind::kHashV2: key += "mask.hash.v2." + algorithm + ".with.salt." + salt; break;
  }
  return config::ColumnMapperRule{.kind = kind,
                                  .chars = chars,
                                  .algorithm = std::move(algorithm),
                                  .salt = std::move(salt),
                                  .columns = std::move(columns),
                                  .key = std::move(key)};
}

MappedColumn Text(std::string_view qualified, int64_t length = INT32_MAX) {
  return MappedColumn{.column = qualified.substr(qualified.rfind('.') + 1),
                      .qualified = qualified,
                      .form = ConnectForm::kText,
                      .type = pg::oid::kText,
                      .character = true,
                      .length = length};
}

std::string Applied(const ColumnValueMap& map, std::optional<std::string> value) {
  bool null = !value.has_value();
  std::string text = value.value_or("");
  std::string scratch;
  EXPECT_TRUE(ApplyColumnMap(map, &null, &text, &scratch).ok());
  return null ? "NULL" : text;
}

TEST(ColumnMapperTest, JavaSerializesAStringWithItsHeaderAndModifiedUtf8) {
  EXPECT_EQ(JavaSerializedString("ab"), std::string("\xAC\xED\x00\x05\x74\x00\x02" "ab", 9));
  // A supplementary character is two surrogates of three bytes each; the length counts their bytes.
  EXPECT_EQ(JavaSerializedString("a\xF0\x9F\x98\x80"),
            std::string("\xAC\xED\x00\x05\x74\x00\x07" "a\xED\xA0\xBD\xED\xB8\x80", 14));
  EXPECT_EQ(JavaSerializedString(""), std::string("\xAC\xED\x00\x05\x74\x00\x00", 7));
  // Above 65,535 bytes: TC_LONGSTRING and an eight-byte length.
  const std::string big = JavaSerializedString(std::string(70000, 'x'));
  EXPECT_EQ(big.substr(0, 13), std::string("\xAC\xED\x00\x05\x7C\x00\x00\x00\x00\x00\x01\x11\x70", 13));
  EXPECT_EQ(big.size(), 13u + 70000u);
}

TEST(ColumnMapperTest, TruncatesInUtf16CodeUnitsAsJavaDoes) {
  std::string out;
  TruncateJavaString("h\xC3\xA9llo", 2, false, &out);  // é is one unit
  EXPECT_EQ(out, "h\xC3\xA9");
  TruncateJavaString("ab\xF0\x9F\x98\x80" "cd", 4, false, &out);  // the emoji is two units
  EXPECT_EQ(out, "ab\xF0\x9F\x98\x80");
  TruncateJavaString("ab\xF0\x9F\x98\x80" "cd", 3, false, &out);  // cut in half: its high surrogate, written '?'
  EXPECT_EQ(out, "ab?");
  // ...or, for a JSON writer, kept (U+D83D in generalized UTF-8), which Jackson writes as \uD83D.
  TruncateJavaString("ab\xF0\x9F\x98\x80" "cd", 3, true, &out);
  EXPECT_EQ(out, "ab\xED\xA0\xBD");
  std::string json;
  AppendJsonString(out, &json);
  EXPECT_EQ(json, R"("ab\uD83D")");
  TruncateJavaString("abc", 0, false, &out);
  EXPECT_EQ(out, "");
  TruncateJavaString("abc", 10, false, &out);
  EXPECT_EQ(out, "abc");
}

TEST(ColumnMapperTest, DigestsAreLowerCaseHexOfSaltThenData) {
  EXPECT_EQ(HexDigest("SHA256", "", "").value(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(HexDigest("MD5", "s", "bob").value(), "758aa1c638f3e35b0c2985fd7a96481c");
  EXPECT_EQ(config::OpenSslDigestName("sha-256"), "SHA256");
  EXPECT_EQ(config::OpenSslDigestName("SHA"), "SHA1");
  EXPECT_EQ(config::OpenSslDigestName("sha-512/256"), "SHA512-256");
  EXPECT_EQ(config::OpenSslDigestName("MD2"), "");
  EXPECT_EQ(config::OpenSslDigestName("Whirlpool"), "");
  // Every name it gives, OpenSSL has.
  for (const char* java : {"MD5", "SHA-1", "SHA-224", "SHA-256", "SHA-384", "SHA-512", "SHA-512/224", "SHA-512/256",
                           "SHA3-224", "SHA3-256", "SHA3-384", "SHA3-512"}) {
    EXPECT_TRUE(HexDigest(config::OpenSslDigestName(java), "s", "v").ok()) << java;
  }
}

TEST(ColumnMapperTest, MasksHashesAndTruncationsChangeTheValueAsDebeziumDoes) {
  const ColumnMappers mappers({Rule(Kind::kMask, "public\\.outbox\\.m", 5),
                               Rule(Kind::kHash, "public\\.outbox\\.(h|hv)", 0, "SHA-256", "pepper"),
                               Rule(Kind::kHashV2, "public\\.outbox\\.h2", 0, "md5", "s"),
                               Rule(Kind::kTruncate, "public\\.outbox\\.(t|b)", 3)});
  const ColumnValueMap mask = mappers.For(Text("public.outbox.m")).value();
  EXPECT_EQ(Applied(mask, "secret"), "*****");
  EXPECT_EQ(Applied(mask, std::nullopt), "*****");  // a NULL too
  EXPECT_EQ(mask.schema_parameters, R"("masked":"true")");
  const ColumnValueMap hash = mappers.For(Text("public.outbox.h")).value();
  EXPECT_EQ(Applied(hash, "alice@example.com"), "cb755529ea5548e3797d230ab3a54ec1a3b7aa098c166456ec1dfd952556b6db");
  EXPECT_EQ(Applied(hash, std::nullopt), "NULL");
  // A column with a length (varchar(10)) keeps that many hex digits.
  EXPECT_EQ(Applied(mappers.For(Text("public.outbox.hv", 10)).value(), "alice@example.com"), "cb755529ea");
  EXPECT_EQ(Applied(mappers.For(Text("public.outbox.h2")).value(), "bob"), "758aa1c638f3e35b0c2985fd7a96481c");
  const ColumnValueMap truncate = mappers.For(Text("public.outbox.t")).value();
  EXPECT_EQ(Applied(truncate, "abcdef"), "abc");
  EXPECT_EQ(truncate.schema_parameters, R"("truncateLength":"3")");
  MappedColumn bytes = Text("public.outbox.b");
  bytes.form = ConnectForm::kBytes;
  bytes.type = pg::oid::kBytea;
  bytes.character = false;
  EXPECT_EQ(Applied(mappers.For(bytes).value(), "\\x0102030405"), "\\x010203");
  EXPECT_EQ(Applied(mappers.For(bytes).value(), "\\x01"), "\\x01");
  // Patterns are matched whole, ignoring ASCII case.
  EXPECT_EQ(mappers.For(Text("PUBLIC.OUTBOX.M")).value().kind, ColumnValueMap::Kind::kMask);
  EXPECT_FALSE(mappers.For(Text("public.outbox.mm")).value().chosen);
}

TEST(ColumnMapperTest, ColumnsTheMapperLeavesAloneStillGetItsSchemaParameter) {
  const ColumnMappers mappers(
      {Rule(Kind::kMask, "public\\.outbox\\.n", 5), Rule(Kind::kTruncate, "public\\.outbox\\.(i|v)", 3)});
  // MaskStrings masks only JDBC CHAR and VARCHAR columns, yet marks every schema it is given.
  MappedColumn number = Text("public.outbox.n");
  number.type = pg::oid::kInt4;
  number.character = false;
  const ColumnValueMap masked = mappers.For(number).value();
  EXPECT_TRUE(masked.chosen);
  EXPECT_EQ(masked.kind, ColumnValueMap::Kind::kNone);
  EXPECT_EQ(masked.schema_parameters, R"("masked":"true")");
  // TruncateColumn: an integer is no String (no change) but its length (10) is above 3.
  MappedColumn integer = Text("public.outbox.i", 10);
  integer.type = pg::oid::kInt4;
  const ColumnValueMap truncated = mappers.For(integer).value();
  EXPECT_EQ(truncated.kind, ColumnValueMap::Kind::kNone);
  EXPECT_EQ(truncated.schema_parameters, R"("truncateLength":"3")");
  // A varchar(2) is never longer than 3: the mapper is chosen (so no source type goes into the schema) and does
  // nothing.
  const ColumnValueMap short_column = mappers.For(Text("public.outbox.v", 2)).value();
  EXPECT_TRUE(short_column.chosen);
  EXPECT_EQ(short_column.kind, ColumnValueMap::Kind::kNone);
  EXPECT_EQ(short_column.schema_parameters, "");
}

TEST(ColumnMapperTest, DebeziumsOrderOfKindsPicksTheRule) {
  const ColumnMappers mappers({Rule(Kind::kHash, "public\\.outbox\\.c", 0, "SHA-256", "s"),
                               Rule(Kind::kMask, "public\\.outbox\\.c", 4),
                               Rule(Kind::kTruncate, "public\\.outbox\\.c", 2)});
  EXPECT_EQ(Applied(mappers.For(Text("public.outbox.c")).value(), "abcdef"), "ab");  // truncation first
  const ColumnMappers mask_then_hash({Rule(Kind::kHash, "public\\.outbox\\.c", 0, "SHA-256", "s"),
                                      Rule(Kind::kMask, "public\\.outbox\\.c", 4)});
  EXPECT_EQ(Applied(mask_then_hash.For(Text("public.outbox.c")).value(), "abcdef"), "****");
  // A propagated source type comes before the hashes, after the masks.
  MappedColumn propagated = Text("public.outbox.c");
  propagated.propagated = true;
  const ColumnMappers hash_only({Rule(Kind::kHash, "public\\.outbox\\.c", 0, "SHA-256", "s")});
  EXPECT_FALSE(hash_only.For(propagated).value().chosen);
  EXPECT_EQ(mask_then_hash.For(propagated).value().kind, ColumnValueMap::Kind::kMask);
}

TEST(ColumnMapperTest, WhatTheRelayDoesNotReproduceIsRefusedNamingTheKeyAndColumn) {
  // Two rules of one kind: Debezium's pick follows its configuration's hash order.
  const ColumnMappers twice({Rule(Kind::kTruncate, "public\\.outbox\\.c", 2), Rule(Kind::kTruncate, ".*\\.c", 3)});
  EXPECT_THAT(std::string(twice.For(Text("public.outbox.c")).status().message()),
              HasSubstr("both select column \"c\""));
  // The same rule twice (two patterns of one list, or an equal rule) is one choice.
  const ColumnMappers same({Rule(Kind::kTruncate, "public\\.outbox\\.c,.*c", 2)});
  EXPECT_TRUE(same.For(Text("public.outbox.c")).ok());
  // A truncation of a STRING other than the column's text (a timestamptz's ISO text).
  const ColumnMappers truncate({Rule(Kind::kTruncate, "public\\.outbox\\.at", 10)});
  MappedColumn zoned = Text("public.outbox.at", 35);
  zoned.form = ConnectForm::kZonedTimestamp;
  zoned.type = pg::oid::kTimestampTz;
  zoned.character = false;
  EXPECT_THAT(std::string(truncate.For(zoned).status().message()),
              AllOf(HasSubstr("outbox.column_mappers.truncate.to.10.chars"), HasSubstr("column \"at\"")));
  // ...unless it is never longer (then nothing changes).
  zoned.length = 10;
  EXPECT_TRUE(truncate.For(zoned).ok());
}

}  // namespace
}  // namespace outbox::outbox
