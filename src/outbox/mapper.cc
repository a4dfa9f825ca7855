// OutboxMapper: outbox rows to Debezium-compatible Kafka records.
#include "common/strings.h"
#include "outbox/mapper.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "config/java_properties.h"
#include "absl/strings/numbers.h"
#include "outbox/source_type.h"
#include "outbox/trace_context.h"
#include "outbox/v1/envelope.pb.h"
#include "pg/type_oids.h"

namespace outbox::outbox {
namespace {

int FindColumn(const pg::Relation& relation, const std::string& name) {
  for (size_t i = 0; i < relation.columns.size(); ++i) {
    if (relation.columns[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

// Whether Kafka Connect's `converter` can write Debezium's value of a column of `type` whose form is `form`
// (JsonConverter: any column Debezium has a schema for; ByteArrayConverter: bytes only, as Kafka Connect's refuses
// others).
absl::Status CheckConverter(config::Converter converter, uint32_t type, const absl::StatusOr<ConnectColumn>& form) {
  switch (converter) {
    case config::Converter::kString:
      return absl::OkStatus();
    case config::Converter::kJson:
    case config::Converter::kJsonSchema: {
      if (form.ok()) return absl::OkStatus();
      return absl::FailedPreconditionError(Cat("(type OID ", type, "): json and json_schema write the types "
                                               "Debezium has a schema for"));
    }
    case config::Converter::kBytes:
      if (type == pg::oid::kBytea) return absl::OkStatus();
      return absl::FailedPreconditionError(
          Cat("(type OID ", type, "): bytes (ByteArrayConverter) needs a bytea column, as Kafka Connect does"));
  }
  return absl::InternalError("unknown converter");
}

// Whether `converter` is Kafka Connect's JsonConverter (with or without schemas).
bool IsJsonConverter(config::Converter converter) {
  return converter == config::Converter::kJson || converter == config::Converter::kJsonSchema;
}

// Kafka Connect's JsonConverter over Debezium's value of a column of `type` (`value`: its text, a bytea's bytes;
// nullopt: NULL): the JSON alone (json: schemas.enable=false), or inside JsonConverter's envelope with the column's
// schema (json_schema): {"schema":<schema>,"payload":<the JSON>}. `typed`: the column's form when it is not a
// string, an integer, an enum or a bytea's bytes (a bytea under outbox.binary_handling_mode other than bytes has one,
// and `value` is then its PostgreSQL text), written as AppendConnectJsonValue writes Debezium's value (its
// INVALID_ARGUMENT for a value the relay does not convert).
absl::Status AppendJsonConverted(config::Converter converter, std::string_view schema, uint32_t type,
                                 const std::optional<ConnectColumn>& typed, std::optional<std::string_view> value,
                                 std::string* out) {
  if (converter == config::Converter::kJsonSchema) out->append(R"({"schema":)").append(schema).append(R"(,"payload":)");
  if (!value.has_value()) {
    out->append("null");  // JsonConverter's null for a NULL of an optional schema
  } else if (typed.has_value()) {
    if (absl::Status st = AppendConnectJsonValue(*typed, type, *value, out); !st.ok()) return st;
  } else if (type == pg::oid::kBytea) {
    AppendJsonString(absl::Base64Escape(absl::string_view(value->data(), value->size())), out);
  } else if (IsIntegerType(type)) {
    out->append(*value);  // a JSON number: PostgreSQL's text is Jackson's
  } else {
    AppendJsonString(*value, out);
  }
  if (converter == config::Converter::kJsonSchema) out->push_back('}');
  return absl::OkStatus();
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string ReplaceAll(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t hit = text.find(from, pos);
    if (hit == std::string_view::npos) break;
    out.append(text.substr(pos, hit - pos));
    out.append(to);
    pos = hit + from.size();
  }
  out.append(text.substr(pos));
  return out;
}

// Unix epoch milliseconds as a google.protobuf.Timestamp (nanos always in [0, 1e9), as the type requires).
void SetTimestamp(v1::Envelope& e, int64_t ms) {
  int64_t seconds = ms / 1000;
  int64_t millis = ms % 1000;
  if (millis < 0) {
    seconds -= 1;
    millis += 1000;
  }
  e.mutable_timestamp()->set_seconds(seconds);
  e.mutable_timestamp()->set_nanos(static_cast<int32_t>(millis * 1000000));
}

// The catalog's column as Debezium's ColumnMetaData sees it.
SourceColumnType SourceColumnOf(const pg::ColumnCatalog& c) {
  return SourceColumnType{.column = c.name,
                          .type_name = c.type_name,
                          .type_oid = c.type_oid,
                          .type_modifier = c.type_modifier,
                          .domain_root_oid = c.domain_root_oid,
                          .domain_root_modifier = c.domain_root_modifier};
}

}  // namespace

bool IsPerEventError(const absl::Status& status) {
  return status.code() == absl::StatusCode::kInvalidArgument;
}

bool BlankAsJavaTrims(std::string_view text) {
  // Java's String.trim() strips every character up to U+0020 from both ends; in UTF-8 those are single bytes, and no
  // byte of a longer sequence is below 0x80.
  return std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) <= 0x20; });
}

bool IsLegalTopicName(std::string_view name) {
  if (name.empty() || name.size() > 249 || name == "." || name == "..") return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

TopicRouter::TopicRouter(const config::OutboxConfig& config) : template_(config.route_topic) {
  if (config.route_topic_regex.empty()) return;
  absl::StatusOr<config::RouteRegex> regex = config::RouteRegex::Compile(config.route_topic_regex);
  if (!regex.ok() || !regex->SetReplacement(config.route_topic_replacement).ok()) {
    regex_broken_ = true;
    return;
  }
  regex_ = *std::move(regex);
}

absl::StatusOr<std::string> TopicRouter::Route(std::string_view value) const {
  if (regex_broken_) return absl::InvalidArgumentError("the route regex or its replacement does not compile");
  if (!regex_.has_value()) return ReplaceAll(template_, "${routedByValue}", value);
  return regex_->Route(value);
}

std::string RouteTopic(const TopicRouter& router, std::string_view routed_by_value) {
  return router.Route(routed_by_value).value_or(std::string());
}

std::string RouteTopic(const config::OutboxConfig& config, std::string_view routed_by_value) {
  return RouteTopic(TopicRouter(config), routed_by_value);
}

absl::StatusOr<int64_t> ParseTimestampMillis(std::string_view text, bool with_zone) {
  absl::StatusOr<int64_t> micros = ParseTimestampMicros(text, with_zone);
  if (!micros.ok()) return micros.status();
  // Floor (toward the past). Debezium divides toward zero (MicroTimestamp / 1_000), which differs only for an instant
  // less than a millisecond before 1970, whose negative timestamp its Java producer refuses anyway.
  return *micros >= 0 ? *micros / 1000 : -((-*micros + 999) / 1000);
}

absl::StatusOr<std::string> DecodeByteaHex(std::string_view text) {
  if (text.size() < 2 || text[0] != '\\' || text[1] != 'x') {
    return absl::InvalidArgumentError("bytea value is not in hex output format");
  }
  absl::StatusOr<std::string> bytes = DecodeHex(text.substr(2));
  if (!bytes.ok()) return absl::InvalidArgumentError(Cat("bytea value has ", bytes.status().message()));
  return bytes;
}

absl::StatusOr<std::string> DecodeHex(std::string_view hex) {
  if (hex.size() % 2 != 0) return absl::InvalidArgumentError("an odd number of hex digits");
  std::string out;
  out.resize(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = HexValue(hex[2 * i]);
    const int lo = HexValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return absl::InvalidArgumentError("a non-hex digit");
    out[i] = static_cast<char>((hi << 4) | lo);
  }
  return out;
}

std::string FormatUuidV7(int64_t unix_ms, uint64_t random_a, uint64_t random_b) {
  const uint64_t high = (static_cast<uint64_t>(unix_ms) << 16) | 0x7000 | (random_a & 0x0fff);
  const uint64_t low = (random_b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  std::string hex = absl::StrFormat("%016x%016x", high, low);
  return Cat(hex.substr(0, 8), "-", hex.substr(8, 4), "-", hex.substr(12, 4), "-", hex.substr(16, 4), "-",
             hex.substr(20));
}

OutboxMapper::OutboxMapper(const config::OutboxConfig& config)
    : config_(config), router_(config), column_mappers_(config.column_mappers) {
  std::tie(schema_, table_) = config::SplitTableName(config.table);
  s_.additional.resize(config_.fields.additional.size());
  for (const config::AdditionalField& f : config_.fields.additional) {
    placement_.push_back(f.placement == "partition"  ? Placement::kPartition
                         : f.placement == "envelope" ? Placement::kEnvelope
                                                     : Placement::kHeader);
  }
  envelope_placement_ = config_.HasEnvelope();
  for (auto [list, out] : {std::pair{&config_.propagate_source_type_columns, &propagate_columns_},
                           std::pair{&config_.propagate_source_type_datatypes, &propagate_datatypes_}}) {
    // The config layer refuses a list or pattern that does not compile.
    *out = config::CompileDebeziumPatternList(*list).value_or(std::vector<config::RouteRegex>{});
  }
  if (config_.format == config::Format::kProtobuf) {
    envelope_ = std::make_unique<v1::Envelope>();
    envelope_->set_source(Cat("/", schema_, "/", table_));
    for (const config::AdditionalField& f : config_.fields.additional) envelope_->add_additional()->set_name(f.name);
  }
}

OutboxMapper::~OutboxMapper() = default;

bool OutboxMapper::ByteaAsBytes(uint32_t type) const {
  return type == pg::oid::kBytea && config_.binary_handling_mode == config::BinaryHandling::kBytes;
}

config::Converter OutboxMapper::KeyConverter(uint32_t type) const {
  return config_.key_converter_binary && ByteaAsBytes(type) ? config::Converter::kBytes : config_.key_converter;
}

config::Converter OutboxMapper::ValueConverter(uint32_t payload_type) const {
  return config_.value_converter_binary && ByteaAsBytes(payload_type) && !envelope_placement_
             ? config::Converter::kBytes
             : config_.value_converter;
}

bool OutboxMapper::IsOutbox(const pg::Relation& relation) const {
  const std::string_view nsp = relation.nspname.empty() ? std::string_view("pg_catalog") : relation.nspname;
  return nsp == schema_ && relation.relname == table_;
}

absl::Status OutboxMapper::CheckBinding(const pg::Relation& relation) {
  absl::StatusOr<const Binding*> b = Bind(relation, Lsn(0));
  return b.ok() ? absl::OkStatus() : b.status();
}

absl::StatusOr<const OutboxMapper::Binding*> OutboxMapper::Bind(const pg::Relation& published, Lsn lsn) {
  auto it = bindings_.find(published.oid);
  if (it != bindings_.end() && it->second.columns == published.columns.size()) {
    return &it->second;
  }
  const pg::Relation relation = WithDomainsResolved(published);
  Binding b;
  b.relation_oid = relation.oid;
  b.columns = relation.columns.size();
  const auto require = [&](const std::string& column, const char* key) -> absl::StatusOr<int> {
    const int idx = FindColumn(relation, column);
    if (idx < 0) {
      return absl::FailedPreconditionError(Cat(
          "column \"", column, "\" (", key, ") is missing from ", schema_, ".", table_,
          " as published at LSN ", lsn.ToString(), " (renamed, dropped, or left out of the publication's column list)"));
    }
    return idx;
  };
  auto id = require(config_.fields.id, "outbox.fields.id");
  if (!id.ok()) return id.status();
  b.id = *id;
  auto key = require(config_.fields.key, "outbox.fields.key");
  if (!key.ok()) return key.status();
  b.key = *key;
  auto route = require(config_.route_by, "outbox.route.by");
  if (!route.ok()) return route.status();
  b.route = *route;
  auto payload = require(config_.fields.payload, "outbox.fields.payload");
  if (!payload.ok()) return payload.status();
  b.payload = *payload;
  b.payload_type = relation.columns[b.payload].type_oid;
  b.key_type = relation.columns[b.key].type_oid;
  // Under outbox.binary_handling_mode other than bytes Debezium's value of a bytea is a string (base64, hex): a key
  // or payload is written from it as from any typed column's value (below), but the string converter's text mode
  // writes PostgreSQL's text, and Kafka Connect's ByteArrayConverter fails on a string.
  if (config_.binary_handling_mode != config::BinaryHandling::kBytes) {
    for (auto [column, type, converter, key] :
         {std::tuple{&config_.fields.key, b.key_type, KeyConverter(b.key_type), "outbox.fields.key"},
          std::tuple{&config_.fields.payload, b.payload_type, ValueConverter(b.payload_type), "outbox.fields.payload"}}) {
      if (type != pg::oid::kBytea) continue;
      if (converter == config::Converter::kBytes) {
        return absl::FailedPreconditionError(
            Cat("column \"", *column, "\" (", key, ") of ", schema_, ".", table_, " is bytea: under "
                "outbox.binary_handling_mode other than bytes Debezium's value of it is a string, which bytes "
                "(ByteArrayConverter) fails on, as Kafka Connect's does"));
      }
      if (converter == config::Converter::kString && config_.string_converter_values == config::StringValues::kText) {
        return absl::FailedPreconditionError(
            Cat("column \"", *column, "\" (", key, ") of ", schema_, ".", table_, " is bytea: under "
                "outbox.binary_handling_mode other than bytes Debezium writes it as text (base64, hex), which "
                "outbox.string_converter_values: text does not write (debezium does)"));
      }
    }
  }
  const int32_t key_modifier = relation.columns[b.key].type_modifier;
  const int32_t payload_modifier = relation.columns[b.payload].type_modifier;
  b.key_form.reset();
  b.value_form.reset();
  for (auto [converter, column, type, modifier, typed, key] :
       {std::tuple{KeyConverter(b.key_type), &config_.fields.key, b.key_type, key_modifier, &b.key_form,
                   "outbox.key_converter"},
        std::tuple{ValueConverter(b.payload_type), &config_.fields.payload, b.payload_type, payload_modifier,
                   &b.value_form, "outbox.value_converter"}}) {
    const absl::StatusOr<ConnectColumn> form = FormOf(*column, type, modifier);
    if (absl::Status st = CheckConverter(converter, type, form); !st.ok()) {
      return absl::FailedPreconditionError(Cat(key, ": column \"", *column, "\" of ", schema_, ".", table_, " ",
                                               st.message()));
    }
    // A key or payload written from Debezium's value, of a type whose values Debezium's converter loses: not
    // reproduced (only a placed field's is, Map).
    const bool java_string =
        converter == config::Converter::kString && config_.string_converter_values == config::StringValues::kDebezium;
    if ((IsJsonConverter(converter) || java_string) && form.ok() && form->lost != ConnectColumn::Lost::kNone) {
      return absl::FailedPreconditionError(Cat(key, ": column \"", *column, "\" of ", schema_, ".", table_,
                                               ": Debezium loses the values of its type (bit[], sparsevec[]: null; "
                                               "int2vector, oidvector: an empty array)"));
    }
    // Strings, integers, enums and a bytea's bytes are written from their text below (AppendJsonConverted); an
    // unknown datatype's bytes (include.unknown.datatypes), a bytea's string under outbox.binary_handling_mode other
    // than bytes, and every other form as Debezium's value.
    if (IsJsonConverter(converter) && form->form != ConnectForm::kText && form->form != ConnectForm::kEnum &&
        !(form->form == ConnectForm::kBytes && ByteaAsBytes(type))) {
      *typed = *form;
    }
    // StringConverter over Debezium's value: Java's text of it (Convert), a bytea's ByteBuffer's.
    if (java_string && !ByteaAsBytes(type)) {
      if (!form.ok()) {
        return absl::FailedPreconditionError(Cat(key, ": column \"", *column, "\" of ", schema_, ".", table_,
                                                 " (type OID ", type, "): Debezium has no schema for its type and "
                                                 "leaves it out of the row, so its router fails every event"));
      }
      if (form->form != ConnectForm::kText && form->form != ConnectForm::kEnum) {
        if (absl::Status st = CheckJavaText(*form); !st.ok()) {
          return absl::FailedPreconditionError(Cat(key, ": column \"", *column, "\" of ", schema_, ".", table_,
                                                   " under StringConverter (string): ", st.message()));
        }
        *typed = *form;
      }
    }
  }
  if (KeyConverter(b.key_type) == config::Converter::kJsonSchema) {
    auto schema = ColumnSchema(config_.fields.key, b.key_type, key_modifier, "outbox.key_converter");
    if (!schema.ok()) return schema.status();
    b.key_schema = *std::move(schema);
  }
  if (ValueConverter(b.payload_type) == config::Converter::kJsonSchema) {
    auto schema = ColumnSchema(config_.fields.payload, b.payload_type, payload_modifier, "outbox.value_converter");
    if (!schema.ok()) return schema.status();
    b.value_schema = *std::move(schema);
  }
  if (config_.fields.timestamp) {
    auto ts = require(*config_.fields.timestamp, "outbox.fields.timestamp");
    if (!ts.ok()) return ts.status();
    b.timestamp = *ts;
    b.timestamp_type = relation.columns[b.timestamp].type_oid;
    if (b.timestamp_type != pg::oid::kTimestamp && b.timestamp_type != pg::oid::kTimestampTz && b.timestamp_type != pg::oid::kInt8 &&
        b.timestamp_type != pg::oid::kInt4 && b.timestamp_type != pg::oid::kInt2) {
      return absl::FailedPreconditionError(Cat("column \"", *config_.fields.timestamp,
                                                        "\" (outbox.fields.timestamp) must be timestamp, "
                                                        "timestamptz or bigint milliseconds"));
    }
  }
  if (config_.format != config::Format::kRaw) {  // CloudEvents' ce_type, the envelope's type
    auto type = require(config_.fields.type, "outbox.fields.type");
    if (!type.ok()) return type.status();
    b.type = *type;
  }
  if (config_.fields.tracing_span_context) {
    if (config_.fields.tracing_span_context_if_present) {
      b.tracing = FindColumn(relation, *config_.fields.tracing_span_context);
    } else {
      auto idx = require(*config_.fields.tracing_span_context, "outbox.fields.tracing_span_context");
      if (!idx.ok()) return idx.status();
      b.tracing = *idx;
    }
  }
  for (const config::AdditionalField& f : config_.fields.additional) {
    Binding::Additional& a = b.additional.emplace_back();
    if (config_.fields.additional_if_present && FindColumn(relation, f.column) < 0) continue;  // left out
    auto idx = require(f.column, "outbox.fields.additional");
    if (!idx.ok()) return idx.status();
    // A column Debezium leaves out of its change events has no field its router could read (under
    // include.unknown.datatypes most of them are bytes instead: FormOf).
    if (const uint32_t type = relation.columns[*idx].type_oid;
        (f.placement == "envelope" || (f.placement == "header" && config_.header_values != config::HeaderValues::kText)) &&
        LeftOutByDebezium(f.column, type, config_.include_unknown_datatypes)) {
      if (config_.fields.additional_if_present) continue;
      const pg::ColumnCatalog* c = CatalogColumn(f.column);
      return absl::FailedPreconditionError(
          Cat("column \"", f.column, "\" (outbox.fields.additional, placement ", f.placement, ") of ", schema_, ".",
              table_, " has type OID ", type, c != nullptr ? Cat(" (", c->type_name, ")") : "",
              ", which Debezium leaves out of its change events, so that its Outbox Event Router fails on every "
              "record; outbox.fields.additional_if_present: true (Debezium's table.field.additional.missing=ignore) "
              "leaves the field out, as Debezium does"));
    }
    a.column = *idx;
    if (f.placement == "partition") {
      // Debezium reads it with Struct.getInt32, which only an integer (int4) column passes.
      if (const uint32_t type = relation.columns[*idx].type_oid; type != pg::oid::kInt4) {
        return absl::FailedPreconditionError(Cat("column \"", f.column, "\" (outbox.fields.additional, placement "
                                                 "partition) of ", schema_, ".", table_, " has type OID ", type,
                                                 ": the partition comes from an integer (int4) column"));
      }
      continue;
    }
    if (const pg::ColumnCatalog* c = CatalogColumn(f.column)) a.not_null = c->not_null;
    if (f.placement == "envelope") {
      if (absl::Status st = BindEnvelopeField(relation, f, a); !st.ok()) return st;
      continue;
    }
    if (config_.header_values != config::HeaderValues::kText) {
      if (absl::Status st = BindHeaderColumn(relation.columns[*idx], "outbox.fields.additional",
                                             "; outbox.header_values: text sends its PostgreSQL text instead", &a.form,
                                             &a.type, &a.schema);
          !st.ok()) {
        return st;
      }
    }
  }
  if (JsonHeaders()) {
    if (absl::Status st = BindHeaderColumn(relation.columns[b.id], "outbox.fields.id", "", &b.id_form, &b.id_type,
                                           &b.id_schema);
        !st.ok()) {
      return st;
    }
    // Only a placed field's value is written as Debezium loses it (Map); the id's would be written as it is.
    if (b.id_form.lost != ConnectColumn::Lost::kNone) {
      return absl::FailedPreconditionError(Cat("column \"", relation.columns[b.id].name, "\" (outbox.fields.id) of ",
                                               schema_, ".", table_, ": Debezium loses the values of its type (bit[], "
                                               "sparsevec[]: null; int2vector, oidvector: an empty array)"));
    }
  }
  // Struct.toString prints the payload's value too. Under the string converter's debezium values the payload's form
  // was checked above, and is written as Java prints it; under text the payload's text is written.
  if (envelope_placement_ && config_.value_converter == config::Converter::kString &&
      config_.string_converter_values == config::StringValues::kText) {
    if (absl::StatusOr<ConnectColumn> form =
            ConnectColumnOf(b.payload_type, relation.columns[b.payload].type_modifier);
        form.ok()) {
      if (absl::Status st = CheckJavaText(*form); !st.ok()) {
        return absl::FailedPreconditionError(
            Cat("column \"", config_.fields.payload, "\" (outbox.fields.payload) of ", schema_, ".", table_,
                ": placement envelope under outbox.value_converter string: ", st.message()));
      }
    }
    // The payload's text is Java's only under the string converter's debezium values (Convert).
    if (ByteaAsBytes(b.payload_type)) {
      return absl::FailedPreconditionError(
          Cat("column \"", config_.fields.payload, "\" (outbox.fields.payload) of ", schema_, ".", table_,
              " is bytea: placement envelope under outbox.value_converter string prints Java's text of its "
              "ByteBuffer only with outbox.string_converter_values: debezium"));
    }
  }
  if (config_.null_as_column_default) {
    b.defaults.resize(relation.columns.size());
    for (size_t i = 0; i < relation.columns.size(); ++i) {
      const pg::RelationColumn& column = relation.columns[i];
      if (const pg::ColumnCatalog* c = CatalogColumn(column.name)) {
        b.defaults[i] = DefaultUnderModes(*c, column.type_oid, column.type_modifier);
      }
    }
  }
  if (!column_mappers_.empty()) {
    // Each column the record reads, and whether it is written only as JSON (by a JsonConverter).
    std::vector<std::pair<int, bool>> read = {{b.id, JsonHeaders()},
                                              {b.key, IsJsonConverter(KeyConverter(b.key_type))},
                                              {b.route, false},
                                              {b.payload, IsJsonConverter(ValueConverter(b.payload_type))},
                                              {b.timestamp, false},
                                              {b.type, false},
                                              {b.tracing, false}};
    for (size_t i = 0; i < b.additional.size(); ++i) {
      const bool as_json = placement_[i] == Placement::kHeader     ? JsonHeaders()
                           : placement_[i] == Placement::kEnvelope ? IsJsonConverter(config_.value_converter)
                                                                   : false;
      read.emplace_back(b.additional[i].column, as_json);
    }
    if (envelope_placement_ && config_.fields.schema_version) {
      read.emplace_back(FindColumn(relation, *config_.fields.schema_version), false);
    }
    b.maps.resize(relation.columns.size());
    std::vector<bool> mapped(relation.columns.size());
    for (const auto& [idx, as_json] : read) {
      if (idx < 0) continue;
      ColumnValueMap& map = b.maps[static_cast<size_t>(idx)];
      if (!mapped[static_cast<size_t>(idx)]) {
        const pg::RelationColumn& column = relation.columns[static_cast<size_t>(idx)];
        absl::StatusOr<ColumnValueMap> of = ColumnMapOf(column.name, column.type_oid, column.type_modifier);
        if (!of.ok()) return of.status();
        map = *std::move(of);
        map.json = true;
        mapped[static_cast<size_t>(idx)] = true;
      }
      map.json = map.json && as_json;  // a column written as text in any of its roles: Java's '?'
    }
  }
  if (envelope_placement_ && config_.fields.schema_version) {
    // Debezium reads it with Struct.getInt32, which only an integer (int4) column passes.
    auto idx = require(*config_.fields.schema_version, "outbox.fields.schema_version");
    if (!idx.ok()) return idx.status();
    if (const uint32_t type = relation.columns[*idx].type_oid; type != pg::oid::kInt4) {
      return absl::FailedPreconditionError(Cat("column \"", *config_.fields.schema_version,
                                               "\" (outbox.fields.schema_version) of ", schema_, ".", table_,
                                               " has type OID ", type, ": the version comes from an integer (int4) "
                                               "column"));
    }
    b.schema_version = *idx;
  }
  auto [pos, inserted] = bindings_.insert_or_assign(relation.oid, std::move(b));
  return &pos->second;
}

bool OutboxMapper::NeedsCatalog() const {
  // Debezium's forms of header and envelope values: an enum's come from the catalog.
  return config_.null_as_column_default || !column_mappers_.empty() ||
         config_.header_values != config::HeaderValues::kText ||
         envelope_placement_ || config_.key_converter != config::Converter::kString ||
         config_.value_converter != config::Converter::kString;
}

void OutboxMapper::SetCatalog(std::vector<pg::ColumnCatalog> columns) {
  catalog_ = std::move(columns);
  bindings_.clear();
}

absl::Status OutboxMapper::BindHeaderColumn(const pg::RelationColumn& column, std::string_view key,
                                            std::string_view hint, ConnectColumn* form, uint32_t* type,
                                            std::string* schema) const {
  absl::StatusOr<ConnectColumn> of = FormOf(column.name, column.type_oid, column.type_modifier);
  if (!of.ok()) {
    return absl::FailedPreconditionError(Cat("column \"", column.name, "\" (", key, ") of ", schema_, ".", table_,
                                             ": ", of.status().message(), hint));
  }
  *form = *std::move(of);
  *type = column.type_oid;
  if (config_.header_values != config::HeaderValues::kJsonSchema) return absl::OkStatus();
  auto with_schema = ColumnSchema(column.name, column.type_oid, column.type_modifier, "outbox.header_values");
  if (!with_schema.ok()) return with_schema.status();
  *schema = *std::move(with_schema);
  return absl::OkStatus();
}

absl::Status OutboxMapper::BindEnvelopeField(const pg::Relation& relation, const config::AdditionalField& f,
                                             Binding::Additional& a) const {
  const pg::RelationColumn& column = relation.columns[static_cast<size_t>(a.column)];
  const auto where = [&] { return Cat("column \"", f.column, "\" (outbox.fields.additional, placement envelope) of ",
                                      schema_, ".", table_, ": "); };
  absl::StatusOr<ConnectColumn> form = FormOf(column.name, column.type_oid, column.type_modifier);
  if (!form.ok()) return absl::FailedPreconditionError(Cat(where(), form.status().message()));
  a.form = *form;
  a.type = column.type_oid;
  switch (config_.value_converter) {
    case config::Converter::kString:
      // A value Debezium always loses to null (a bit[]'s) prints as null, whatever Java would print for its bytes.
      if (absl::Status st = a.form.lost == ConnectColumn::Lost::kNull ? absl::OkStatus() : CheckJavaText(a.form);
          !st.ok()) {
        return absl::FailedPreconditionError(Cat(where(), "under outbox.value_converter string ", st.message()));
      }
      break;
    case config::Converter::kJsonSchema: {
      auto schema = ColumnSchema(f.column, column.type_oid, column.type_modifier, "outbox.fields.additional");
      if (!schema.ok()) return schema.status();
      a.schema = *std::move(schema);
      a.schema.pop_back();  // the field's name goes last (asJsonSchema adds it to the column's schema)
      a.schema.append(R"(,"field":)");
      AppendJsonString(f.name, &a.schema);
      a.schema.push_back('}');
      break;
    }
    case config::Converter::kJson:
    case config::Converter::kBytes:  // refused with envelope placement by the config
      break;
  }
  return absl::OkStatus();
}

namespace {

// Whether Debezium has no schema for a column of this user-defined type (an OID past the built-in ones): a composite,
// range, multirange or base type its TypeRegistry does not know by name (an extension's other than those
// ExtensionColumn names), or an array of one. Debezium's schema builder falls back to the JDBC type pgjdbc reports
// for it, for which it has none (seen side by side: UserDefinedTypesDebeziumHasNoSchemaFor...). A domain, an enum, and
// an array of a domain are not judged here.
bool UserTypeLeftOut(const pg::ColumnCatalog& c) {
  constexpr uint32_t kFirstNormalObjectId = 16384;
  const auto unknown = [](char type_type, const std::string& name) {
    return (type_type == 'b' || type_type == 'c' || type_type == 'r' || type_type == 'm') &&
           !ExtensionColumn(name).has_value();
  };
  if (c.type_oid < kFirstNormalObjectId || c.domain_root_oid != 0) return false;
  // An array of a domain too (seen side by side: Debezium has no schema for it, while it has for the domain).
  if (c.element_oid != 0) {
    return c.element_oid >= kFirstNormalObjectId &&
           (c.element_type_type == 'd' || unknown(c.element_type_type, c.element_name));
  }
  return unknown(c.type_type, c.type_name);
}

}  // namespace

absl::StatusOr<ConnectColumn> OutboxMapper::FormOf(const std::string& name, uint32_t type,
                                                   int32_t type_modifier) const {
  absl::StatusOr<ConnectColumn> form = ConnectColumnOf(type, type_modifier);
  if (form.ok()) return UnderModes(*std::move(form));
  if (config_.include_unknown_datatypes) {
    if (std::optional<ConnectColumn> bytes = UnknownDatatypeColumn(type)) return UnderModes(*std::move(bytes));
    // A user-defined type Debezium has no schema for: the bytes of its text, an array's a list of required bytes.
    if (const pg::ColumnCatalog* c = LeftOutUserType(name, type)) {
      return UnderModes(TextBytesColumn(c->element_oid, c->element_delimiter));
    }
  }
  const pg::ColumnCatalog* c = CatalogColumn(name);
  if (c == nullptr || c->type_oid != type) return form;
  if (c->enum_labels) return ConnectColumn{ConnectForm::kEnum, 0, *c->enum_labels};
  if (c->element_enum_labels) {
    ConnectColumn array{ConnectForm::kArray, 0, *c->element_enum_labels};
    array.element = ConnectForm::kEnum;
    return array;
  }
  if (std::optional<ConnectColumn> extension = ExtensionColumn(c->type_name)) return UnderModes(*std::move(extension));
  return form;
}

const pg::ColumnCatalog* OutboxMapper::LeftOutUserType(const std::string& name, uint32_t type) const {
  const pg::ColumnCatalog* c = CatalogColumn(name);
  return c != nullptr && c->type_oid == type && UserTypeLeftOut(*c) ? c : nullptr;
}

bool OutboxMapper::LeftOutByDebezium(const std::string& name, uint32_t type, bool unknown_included) const {
  if (DebeziumLeavesOut(type, unknown_included)) return true;
  if (unknown_included) return false;  // bytes instead
  return LeftOutUserType(name, type) != nullptr;
}

ConnectColumn OutboxMapper::UnderModes(ConnectColumn form) const {
  ConnectColumn under = UnderDecimalMode(std::move(form));
  if (under.form == ConnectForm::kInterval && config_.interval_handling_mode == config::IntervalHandling::kString) {
    under.form = ConnectForm::kIntervalString;
  }
  under.money_digits = static_cast<int>(config_.money_fraction_digits);  // kMoney's
  // An array's elements take the modes as a column of their type would (Debezium's createArrayConverter converts
  // each element with its type's converter, and its schema is an array of that converter's schema).
  ConnectForm& f = under.form == ConnectForm::kArray ? under.element : under.form;
  if (config_.hstore_handling_mode == config::HstoreHandling::kMap && f == ConnectForm::kHstore) {
    f = ConnectForm::kHstoreMap;
  }
  if (config_.binary_handling_mode != config::BinaryHandling::kBytes && f == ConnectForm::kBytes) {
    f = ConnectForm::kBinaryString;
    switch (config_.binary_handling_mode) {
      case config::BinaryHandling::kBase64UrlSafe: under.binary = ConnectColumn::BinaryText::kBase64UrlSafe; break;
      case config::BinaryHandling::kHex: under.binary = ConnectColumn::BinaryText::kHex; break;
      default: under.binary = ConnectColumn::BinaryText::kBase64;
    }
  }
  return UnderTimeMode(std::move(under));
}

// time.precision.mode's forms of date, time and timestamp, a column's or an array's elements'.
ConnectColumn OutboxMapper::UnderTimeMode(ConnectColumn form) const {
  using config::TimePrecision;
  const TimePrecision mode = config_.time_precision_mode;
  if (mode == TimePrecision::kAdaptive) return form;
  const auto under = [mode](ConnectForm f) {
    const bool nanos = mode == TimePrecision::kNanoseconds;
    if (mode == TimePrecision::kIsoString) {
      switch (f) {
        case ConnectForm::kDate: return ConnectForm::kIsoDate;
        case ConnectForm::kTimeMillis:
        case ConnectForm::kTimeMicros: return ConnectForm::kIsoTime;
        case ConnectForm::kTimestampMillis:
        case ConnectForm::kTimestampMicros: return ConnectForm::kIsoTimestamp;
        default: return f;
      }
    }
    if (mode == TimePrecision::kConnect) {
      switch (f) {
        case ConnectForm::kDate: return ConnectForm::kConnectDate;
        case ConnectForm::kTimeMillis:
        case ConnectForm::kTimeMicros: return ConnectForm::kConnectTime;
        case ConnectForm::kTimestampMillis:
        case ConnectForm::kTimestampMicros: return ConnectForm::kConnectTimestamp;
        default: return f;
      }
    }
    switch (f) {
      case ConnectForm::kTimeMillis:
      case ConnectForm::kTimeMicros: return nanos ? ConnectForm::kTimeNanos : ConnectForm::kTimeMicros;
      case ConnectForm::kTimestampMillis:
      case ConnectForm::kTimestampMicros:
        return nanos                                ? ConnectForm::kTimestampNanos
               : mode == TimePrecision::kMicroseconds ? ConnectForm::kTimestampMicros
                                                      : f;
      default: return f;
    }
  };
  ConnectForm& f = form.form == ConnectForm::kArray ? form.element : form.form;
  f = under(f);
  return form;
}

ConnectColumn OutboxMapper::UnderDecimalMode(ConnectColumn form) const {
  const config::DecimalHandling mode = config_.decimal_handling_mode;
  if (mode == config::DecimalHandling::kPrecise) return form;
  const bool string = mode == config::DecimalHandling::kString;
  switch (form.form) {
    case ConnectForm::kDecimal:
    case ConnectForm::kVariableDecimal:
      form = ConnectColumn{string ? ConnectForm::kDecimalString : ConnectForm::kFloat64};
      break;
    case ConnectForm::kMoney: form = ConnectColumn{string ? ConnectForm::kMoneyString : ConnectForm::kMoneyDouble}; break;
    case ConnectForm::kArray:  // numeric[] (Debezium has no money[]): its elements as numeric columns
      if (form.element == ConnectForm::kDecimal || form.element == ConnectForm::kVariableDecimal) {
        form.element = string ? ConnectForm::kDecimalString : ConnectForm::kFloat64;
      }
      break;
    default:
      break;
  }
  return form;
}

ConnectDefault OutboxMapper::DefaultUnderModes(const pg::ColumnCatalog& c, uint32_t type,
                                               int32_t type_modifier) const {
  // The mode's converter reads an infinite date or timestamp default (DebeziumColumnDefault's form).
  std::optional<ConnectForm> time_form;
  if (absl::StatusOr<ConnectColumn> adaptive = ConnectColumnOf(type, type_modifier); adaptive.ok()) {
    time_form = UnderTimeMode(*adaptive).form;
  }
  ConnectDefault dflt = DefaultOf(c, type, type_modifier, time_form);
  if (dflt.kind != ConnectDefault::Kind::kValue || config_.decimal_handling_mode == config::DecimalHandling::kPrecise) {
    return dflt;
  }
  // Debezium converts a numeric or money default through the mode (scale adjusted first): not reproduced.
  absl::StatusOr<ConnectColumn> form = ConnectColumnOf(type, type_modifier);
  if (form.ok() && (form->form == ConnectForm::kDecimal || form->form == ConnectForm::kVariableDecimal ||
                    form->form == ConnectForm::kMoney)) {
    dflt.kind = ConnectDefault::Kind::kNotReproduced;
  }
  return dflt;
}

pg::Relation OutboxMapper::WithDomainsResolved(const pg::Relation& relation) const {
  pg::Relation resolved = relation;
  for (pg::RelationColumn& column : resolved.columns) {
    const pg::ColumnCatalog* c = CatalogColumn(column.name);
    if (c == nullptr || c->domain_root_oid == 0 || c->type_oid != column.type_oid) continue;
    column.type_oid = c->domain_root_oid;
    column.type_modifier = c->domain_root_modifier;
  }
  return resolved;
}

bool OutboxMapper::DebeziumReadsDefault(const pg::ColumnCatalog& c) {
  // Debezium's default value converter knows a type by the column's type name, which for a domain is the domain's.
  return c.has_default && c.domain_root_oid == 0;
}

ConnectDefault OutboxMapper::DefaultOf(const pg::ColumnCatalog& c, uint32_t type, int32_t type_modifier,
                                      std::optional<ConnectForm> time_form) {
  if (!DebeziumReadsDefault(c)) return ConnectDefault{};
  if (c.enum_labels && c.type_oid == type) return DebeziumEnumDefault(c.type_name, c.default_expression, c.generated);
  return DebeziumColumnDefault(type, type_modifier, c.default_expression, c.generated, time_form);
}

const pg::ColumnCatalog* OutboxMapper::CatalogColumn(const std::string& name) const {
  if (!catalog_.has_value()) return nullptr;
  const auto column = std::find_if(catalog_->begin(), catalog_->end(),
                                   [&](const pg::ColumnCatalog& c) { return c.name == name; });
  return column == catalog_->end() ? nullptr : &*column;
}

absl::StatusOr<std::string> OutboxMapper::ColumnSchema(const std::string& name, uint32_t type, int32_t type_modifier,
                                                       std::string_view key) const {
  const auto where = [&] { return Cat(key, ": json_schema: column \"", name, "\" of ", schema_, ".", table_); };
  if (!catalog_.has_value()) return absl::InternalError(Cat(where(), ": the table's catalog was not read"));
  // A column of the relation the catalog no longer has (dropped or renamed since the row was written, and the
  // catalog read again after that: a replay, a restart): Debezium's Relation handler, which reads the catalog too,
  // gives it no default and, its "optionality could not be determined", an optional schema. A propagated source
  // type and a column mapper would need its declared type, which only the catalog had.
  const pg::ColumnCatalog* column = CatalogColumn(name);
  if (column == nullptr && (!propagate_columns_.empty() || !propagate_datatypes_.empty() || !column_mappers_.empty())) {
    return absl::FailedPreconditionError(
        Cat(where(), " is not in the catalog as read at the table's Relation message (renamed or dropped since), "
                     "so its declared type, which outbox.propagate_source_type and outbox.column_mappers read, is "
                     "unknown"));
  }
  // Debezium's schema carries the column's default (JsonConverter writes it, and writes it for a NULL).
  const ConnectDefault dflt = column != nullptr ? DefaultUnderModes(*column, type, type_modifier) : ConnectDefault{};
  if (column != nullptr && DebeziumReadsDefault(*column) &&
      (!config_.null_as_column_default || dflt.kind == ConnectDefault::Kind::kNotReproduced)) {
    return absl::FailedPreconditionError(Cat(
        where(), " has a default: Debezium's schema then carries it, and JsonConverter writes it for a NULL; ",
        config_.null_as_column_default ? "the relay does not reproduce Debezium's default of this type"
                                       : "set outbox.null_as_column_default: true (as Debezium files do)",
        " (or drop the default, or use json)"));
  }
  absl::StatusOr<ConnectColumn> form = FormOf(name, type, type_modifier);
  if (!form.ok()) {
    return absl::FailedPreconditionError(Cat(where(), ": type OID ", type, " has no schema the relay reproduces"));
  }
  std::string schema;
  if (column == nullptr) {
    AppendConnectJsonSchema(*form, type, type_modifier, /*optional=*/true, &schema);
    return schema;
  }
  absl::StatusOr<std::string> source_type = SourceTypeOf(*column);
  if (!source_type.ok()) return absl::FailedPreconditionError(Cat(key, ": ", source_type.status().message()));
  // A column mapper that Debezium picks over the propagation adds its own parameter instead.
  absl::StatusOr<ColumnValueMap> map = ColumnMapOf(name, type, type_modifier);
  if (!map.ok()) return map.status();
  AppendConnectJsonSchema(*form, type, type_modifier, !column->not_null, &schema,
                          map->chosen ? map->schema_parameters : *source_type);
  if (dflt.kind == ConnectDefault::Kind::kValue) {
    std::string json;
    if (absl::Status st = AppendConnectJsonValue(*form, type, dflt.text, &json); !st.ok()) {
      return absl::FailedPreconditionError(Cat(where(), ": its default: ", st.message()));
    }
    schema.pop_back();
    schema.append(R"(,"default":)").append(json).push_back('}');
  }
  return schema;
}

absl::StatusOr<std::string> OutboxMapper::SourceTypeOf(const pg::ColumnCatalog& column) const {
  absl::StatusOr<bool> propagates = Propagates(column);
  if (!propagates.ok()) return propagates.status();
  if (!*propagates) return std::string();
  return SourceTypeParameters(SourceColumnOf(column));
}

absl::StatusOr<ColumnValueMap> OutboxMapper::ColumnMapOf(const std::string& name, uint32_t type,
                                                         int32_t type_modifier) const {
  if (column_mappers_.empty()) return ColumnValueMap{};
  const pg::ColumnCatalog* c = CatalogColumn(name);
  if (c == nullptr) {
    return absl::FailedPreconditionError(Cat("outbox.column_mappers: column \"", name, "\" of ", schema_, ".", table_,
                                             " is not in the catalog as read at the table's Relation message "
                                             "(renamed or dropped since)"));
  }
  absl::StatusOr<bool> propagated = Propagates(*c);
  if (!propagated.ok()) return propagated.status();
  absl::StatusOr<SourceLengthAndScale> size = SourceColumnLength(SourceColumnOf(*c));
  const absl::StatusOr<ConnectColumn> form = FormOf(name, type, type_modifier);
  const bool domain = c->domain_root_oid != 0;
  const std::string qualified = Cat(schema_, ".", table_, ".", name);
  MappedColumn mapped{.column = name,
                      .qualified = qualified,
                      .form = form.ok() ? form->form : ConnectForm::kText,
                      .form_known = form.ok(),
                      .type = type,
                      .character = !domain && (c->enum_labels.has_value() || type == pg::oid::kText ||
                                               type == pg::oid::kVarchar || type == pg::oid::kBpchar ||
                                               type == pg::oid::kName || type == pg::oid::kChar),
                      .length = size.ok() ? size->length : 0,
                      .length_known = size.ok(),
                      .propagated = *propagated};
  return column_mappers_.For(mapped);
}

absl::StatusOr<bool> OutboxMapper::Propagates(const pg::ColumnCatalog& column) const {
  if (propagate_columns_.empty() && propagate_datatypes_.empty()) return false;
  // Debezium's ColumnMappers: <schema>.<table>.<column> for column.propagate.source.type, <schema>.<table>.<type
  // name> for datatype.propagate.source.type, either matched whole ignoring ASCII case.
  const std::string by_name = Cat(schema_, ".", table_, ".", column.name);
  const std::string by_type = Cat(schema_, ".", table_, ".", column.type_name);
  if (!IsAscii(by_name) || !IsAscii(by_type)) {
    return absl::FailedPreconditionError(
        Cat("outbox.propagate_source_type: ", by_name, " (of type ", column.type_name, ") has characters beyond "
            "ASCII, whose case Debezium's patterns (Java's, ignoring ASCII case) and the relay's fold differently"));
  }
  const auto any = [](const std::vector<config::RouteRegex>& patterns, std::string_view value) {
    return std::any_of(patterns.begin(), patterns.end(), [&](const config::RouteRegex& p) { return p.Matches(value); });
  };
  return any(propagate_columns_, by_name) || any(propagate_datatypes_, by_type);
}

absl::StatusOr<Record> OutboxMapper::Map(const pg::Relation& relation, const pg::TupleData& tuple, Lsn commit_lsn,
                                         int64_t commit_time_ms) {
  auto binding = Bind(relation, commit_lsn);
  if (!binding.ok()) return binding.status();
  const Binding& b = **binding;
  if (tuple.columns.size() != b.columns) {
    return absl::DataLossError(Cat("insert into ", schema_, ".", table_, " at LSN ", commit_lsn.ToString(),
                                            " has ", tuple.columns.size(), " columns but its relation has ",
                                            b.columns));
  }
  // A NULL (or a field Debezium leaves unset) reads as the column's default under outbox.null_as_column_default:
  // Debezium's Struct.get gives the schema's default for a null.
  // through_forms: the field is written as Debezium's value (a header under outbox.header_values other than text, an
  // envelope field), the only places an infinite date or timestamp default (kInfinityDefault) is written as Debezium's.
  const auto read_default = [&](Field& field, int idx, bool through_forms) -> absl::Status {
    if (b.defaults.empty()) return absl::OkStatus();
    const ConnectDefault& d = b.defaults[static_cast<size_t>(idx)];
    if (d.kind == ConnectDefault::Kind::kValue && !through_forms && IsInfinityDefault(d.text)) {
      return absl::InvalidArgumentError(Cat(
          "column \"", relation.columns[idx].name, "\" is NULL, and Debezium would write its default, ",
          d.text == kInfinityDefault ? "infinity" : "-infinity", ", which the relay writes as Debezium does only in a "
          "header under outbox.header_values other than text or an envelope field (outbox.null_as_column_default) "
          "(event id=", s_.id.null ? "NULL" : s_.id.text, " at LSN ", commit_lsn.ToString(), ")"));
    }
    if (d.kind == ConnectDefault::Kind::kValue) field.Set(d.text);
    if (d.kind == ConnectDefault::Kind::kNotReproduced) {
      return absl::InvalidArgumentError(Cat(
          "column \"", relation.columns[idx].name, "\" is NULL, and Debezium would write its default, which "
          "the relay does not work out for its type (type OID ", relation.columns[idx].type_oid,
          "; outbox.null_as_column_default) (event id=", s_.id.null ? "NULL" : s_.id.text, " at LSN ",
          commit_lsn.ToString(), ")"));
    }
    return absl::OkStatus();
  };
  const auto fill = [&](Field& field, int idx, bool through_forms) -> absl::Status {
    if (idx < 0) {
      field.SetNull();
      return absl::OkStatus();
    }
    const pg::ColumnValue& v = tuple.columns[idx];
    const ColumnValueMap* map = b.maps.empty() ? nullptr : &b.maps[static_cast<size_t>(idx)];
    switch (v.kind) {
      case pg::ColumnValue::Kind::kNull:
        field.SetNull();
        if (map != nullptr && map->kind == ColumnValueMap::Kind::kMask) {
          // Debezium's mask makes even a NULL its asterisks (and Struct.get then has no default to give).
          field.Set(map->mask);
          return absl::OkStatus();
        }
        return read_default(field, idx, through_forms);
      case pg::ColumnValue::Kind::kText:
        field.Set(v.data);
        if (map != nullptr) {
          // The mapper works on Debezium's value; a NULL it leaves (a hash's) still reads the schema's default.
          if (absl::Status st = ApplyColumnMap(*map, &field.null, &field.text, &s_.converted); !st.ok()) {
            return absl::InvalidArgumentError(Cat("column \"", relation.columns[idx].name, "\": ", st.message(),
                                                  " (outbox.column_mappers) at LSN ", commit_lsn.ToString()));
          }
        }
        return absl::OkStatus();
      case pg::ColumnValue::Kind::kUnchanged:
      case pg::ColumnValue::Kind::kBinary:
        break;
    }
    return absl::DataLossError(Cat("column \"", relation.columns[idx].name, "\" at LSN ",
                                            commit_lsn.ToString(), " is not in text form"));
  };
  for (auto [field, idx] : {std::pair<Field*, int>{&s_.id, b.id}, {&s_.key, b.key}, {&s_.route, b.route},
                            {&s_.payload, b.payload}, {&s_.timestamp, b.timestamp}, {&s_.type, b.type},
                            {&s_.tracing, b.tracing}}) {
    if (absl::Status st = fill(*field, idx, /*through_forms=*/false); !st.ok()) return st;
  }
  for (size_t i = 0; i < b.additional.size(); ++i) {
    Field& field = s_.additional[i];
    const Binding::Additional& a = b.additional[i];
    const bool through_forms = placement_[i] == Placement::kEnvelope ||
                               (placement_[i] == Placement::kHeader &&
                                config_.header_values != config::HeaderValues::kText);
    if (absl::Status st = fill(field, a.column, through_forms); !st.ok()) return st;
    field.absent = a.column < 0;
    if (!field.null && a.form.lost != ConnectColumn::Lost::kNone) {
      // Debezium's converter loses the value (ConnectColumn::lost): a NOT NULL column's null fails its required
      // schema, as Debezium's record fails Kafka Connect's check.
      if (a.form.lost == ConnectColumn::Lost::kEmptyArray) {
        field.text = "{}";
      } else if (a.not_null) {
        return absl::InvalidArgumentError(Cat("column \"", config_.fields.additional[i].column,
                                              "\": Debezium writes its value (a bit[]'s, a sparsevec[]'s) as null, "
                                              "which the NOT NULL column's schema refuses (event id=",
                                              s_.id.null ? "NULL" : s_.id.text,
                                              " at LSN ", commit_lsn.ToString(), ")"));
      } else {
        field.SetNull();
      }
    }
    if (!field.null && !a.not_null &&
        ((config_.event_converting_failure_handling_mode != config::ConvertingFailure::kFail &&
          DebeziumConversionFails(a.form, field.text)) ||
         DebeziumConvertsToNull(a.form, field.text))) {
      // Debezium's converter fails on the value, and its warn and skip modes leave the field unset, or the converter
      // gives null whatever the mode: null, or the schema's default. A NOT NULL column's stays an error: Debezium's
      // converter throws, or its record fails Kafka Connect's checks.
      field.SetNull();
      if (absl::Status st = read_default(field, a.column, through_forms); !st.ok()) return st;
    }
    if (config_.header_values == config::HeaderValues::kText || field.absent || placement_[i] != Placement::kHeader) {
      continue;
    }
    if (field.null && !JsonHeaders()) continue;  // SimpleHeaderConverter: a null header
    s_.converted.clear();
    const absl::Status st =
        JsonHeaders() ? AppendJsonHeader(a.form, a.type, a.schema,
                                         field.null ? std::nullopt : std::optional<std::string_view>(field.text),
                                         &s_.converted)
                      : AppendConnectValue(a.form, field.text, &s_.converted);
    if (!st.ok()) {
      return absl::InvalidArgumentError(Cat("column \"", config_.fields.additional[i].column, "\": ", st.message(),
                                            " (event id=", s_.id.null ? "NULL" : s_.id.text, " at LSN ",
                                            commit_lsn.ToString(), ")"));
    }
    field.text.swap(s_.converted);
    field.null = false;  // JsonConverter writes a NULL as the JSON null
  }
  if (JsonHeaders() && !s_.id.null) {
    s_.id_header.clear();
    if (absl::Status st = AppendJsonHeader(b.id_form, b.id_type, b.id_schema, s_.id.text, &s_.id_header); !st.ok()) {
      return absl::InvalidArgumentError(Cat("the id column \"", config_.fields.id, "\": ", st.message(), " (at LSN ",
                                            commit_lsn.ToString(), ")"));
    }
  }
  s_.payload_type = b.payload_type;
  s_.timestamp_type = b.timestamp_type;
  s_.key_type = b.key_type;
  s_.key_schema = b.key_schema;
  s_.value_schema = b.value_schema;
  s_.key_form = &b.key_form;
  s_.value_form = &b.value_form;
  s_.bound_additional = &b.additional;
  if (absl::Status st = fill(s_.schema_version, b.schema_version, /*through_forms=*/false); !st.ok()) return st;
  return Build(commit_lsn, commit_time_ms);
}

absl::StatusOr<Record> OutboxMapper::Build(Lsn commit_lsn, int64_t commit_time_ms) {
  const auto where = [&] {
    return Cat("event id=", s_.id.null ? "NULL" : s_.id.text, " at LSN ", commit_lsn.ToString());
  };
  if (s_.id.null) {
    return absl::InvalidArgumentError(Cat("the id column \"", config_.fields.id, "\" is NULL (", where(),
                                                   ")"));
  }
  if (s_.route.null) {
    return absl::InvalidArgumentError(Cat("the route column \"", config_.route_by, "\" is NULL (", where(),
                                                   ")"));
  }
  // Events of one type mostly come in runs: route a repeated value once.
  if (s_.route.text != s_.routed_value || s_.topic.empty()) {
    absl::StatusOr<std::string> topic = router_.Route(s_.route.text);
    if (!topic.ok()) {
      return absl::InvalidArgumentError(Cat("the route value \"", s_.route.text, "\" of ", where(), ": ",
                                             topic.status().message()));
    }
    s_.routed_value = s_.route.text;
    s_.topic = *std::move(topic);
  }
  if (!IsLegalTopicName(s_.topic)) {
    return absl::InvalidArgumentError(Cat("illegal topic name \"", s_.topic,
                                                   "\" (legal: [a-zA-Z0-9._-], 1 to 249 characters) for ", where()));
  }
  Record& r = s_.record;
  r.topic = s_.topic;
  r.route_value = s_.routed_value;
  r.event_id = s_.id.text;
  r.key = s_.key.null ? std::nullopt : std::optional<std::string_view>(s_.key.text);
  // Empty as Debezium judges it: blank once Java trims it ("\\x", an empty bytea's text, is not: see below). Under
  // the string converter's debezium values Java's text of a typed value (a number, a map's "{}") is never blank.
  const bool judged_by_text =
      config_.string_converter_values == config::StringValues::kText || !s_.value_form->has_value();
  if (s_.payload.null ||
      (config_.tombstone_on_empty_payload && judged_by_text && BlankAsJavaTrims(s_.payload.text))) {
    r.value = std::nullopt;
  } else if (config_.tombstone_on_empty_payload && s_.payload_type == pg::oid::kBytea &&
             !ByteaAsBytes(s_.payload_type) && s_.payload.text == "\\x") {
    // Under outbox.binary_handling_mode other than bytes Debezium's value is the bytes' base64 or hex text (written
    // from the column's text by its form, Convert): an empty bytea's is "", a blank payload.
    r.value = std::nullopt;
  } else if (ByteaAsBytes(s_.payload_type)) {
    auto bytes = DecodeByteaHex(s_.payload.text);
    if (!bytes.ok()) return absl::InvalidArgumentError(Cat(bytes.status().message(), " (", where(), ")"));
    s_.payload_bytes = std::move(*bytes);
    // "\\x": an empty bytea is an empty payload too, but not as Debezium judges it (the string converter's
    // debezium values): Java's text of a ByteBuffer, "java.nio.HeapByteBuffer[pos=0 lim=0 cap=0]", is never blank.
    if (config_.tombstone_on_empty_payload && s_.payload_bytes.empty() &&
        config_.string_converter_values == config::StringValues::kText) {
      r.value = std::nullopt;
    } else {
      r.value = s_.payload_bytes;
    }
  } else {
    r.value = s_.payload.text;
  }
  r.timestamp_ms = commit_time_ms;
  if (!s_.timestamp.null) {
    if (s_.timestamp_type == pg::oid::kTimestamp || s_.timestamp_type == pg::oid::kTimestampTz) {
      auto ms = ParseTimestampMillis(s_.timestamp.text, s_.timestamp_type == pg::oid::kTimestampTz);
      if (!ms.ok()) return absl::InvalidArgumentError(Cat(ms.status().message(), " (", where(), ")"));
      r.timestamp_ms = *ms;
    } else {
      int64_t v = 0;
      if (!absl::SimpleAtoi(s_.timestamp.text, &v)) {
        return absl::InvalidArgumentError(Cat("unparsable timestamp \"", s_.timestamp.text, "\" (", where(),
                                                       ")"));
      }
      r.timestamp_ms = v;
    }
  }
  if (absl::Status st = Convert(r); !st.ok()) {
    return absl::InvalidArgumentError(Cat(st.message(), " (", where(), ")"));
  }
  if (envelope_placement_) {
    if (absl::Status st = WriteEnvelope(r); !st.ok()) {
      return absl::InvalidArgumentError(Cat(st.message(), " (", where(), ")"));
    }
  } else if (absl::Status st = ExpandPayload(r); !st.ok()) {
    return absl::InvalidArgumentError(Cat(st.message(), " (", where(), ")"));
  }
  if (commit_lsn != s_.source_lsn_of || s_.source_lsn.empty()) {
    s_.source_lsn_of = commit_lsn;
    s_.source_lsn = commit_lsn.ToString();
  }
  r.headers.clear();
  if (!config_.debezium_context_logical_name.empty()) {
    // What Debezium's connector puts on each of its records, ahead of the router's id.
    const std::string_view values[std::size(config::kDebeziumContextHeaders)] = {
        config_.debezium_context_logical_name, "0", "postgresql", run_id_};
    for (size_t i = 0; i < std::size(values); ++i) {
      std::string_view value = values[i];
      if (JsonHeaders()) {
        SetJsonStringHeader(value, &s_.context_headers[i]);
        value = s_.context_headers[i];
      }
      r.headers.push_back(Header{config::kDebeziumContextHeaders[i], value});
    }
  }
  // Debezium's tracing adds its headers to the change event, before the router adds the id.
  AddTraceHeaders(r);
  r.headers.push_back(Header{"id", std::string_view(JsonHeaders() ? s_.id_header : s_.id.text)});
  r.partition.reset();
  for (size_t i = 0; i < config_.fields.additional.size(); ++i) {
    const Field& f = s_.additional[i];
    if (f.absent) continue;
    if (placement_[i] == Placement::kEnvelope) continue;
    if (placement_[i] == Placement::kPartition) {
      if (f.null) continue;  // NULL: the partitioner decides, as in Debezium
      int32_t partition = 0;
      if (!absl::SimpleAtoi(f.text, &partition) || partition < 0) {
        return absl::InvalidArgumentError(Cat("column \"", config_.fields.additional[i].column,
                                              "\" (placement partition): \"", f.text, "\" is no partition (",
                                              where(), ")"));
      }
      r.partition = partition;
      continue;
    }
    r.headers.push_back(Header{config_.fields.additional[i].name,
                               f.null ? std::nullopt : std::optional<std::string_view>(f.text)});
  }
  r.headers.push_back(Header{"source_lsn", std::string_view(s_.source_lsn)});
  if (config_.format == config::Format::kCloudEvents) AddCloudEventsHeaders(r);
  if (config_.format == config::Format::kProtobuf) {
    if (absl::Status st = WrapInEnvelope(r); !st.ok()) return st;
  }
  return r;
}

// The value becomes an outbox.v1.Envelope around the payload. A NULL payload gives an envelope without one, unless
// tombstone_on_empty_payload asks for tombstones: then a NULL or empty payload gives a null value, as in raw.
absl::Status OutboxMapper::WrapInEnvelope(Record& r) {
  if (!r.value && config_.tombstone_on_empty_payload) return absl::OkStatus();
  // mutable_*()->assign rather than set_*(): protobuf 3.21's setters copy a pointer and length into a temporary
  // std::string first.
  const auto assign = [](std::string* field, std::string_view v) { field->assign(v.data(), v.size()); };
  v1::Envelope& e = *envelope_;
  assign(e.mutable_id(), s_.id.text);
  assign(e.mutable_type(), s_.type.text);
  if (r.key) {
    assign(e.mutable_key(), *r.key);
  } else {
    e.clear_key();
  }
  assign(e.mutable_route_value(), s_.route.text);
  if (r.value) {
    assign(e.mutable_payload(), *r.value);
  } else {
    e.clear_payload();
  }
  SetTimestamp(e, r.timestamp_ms);
  assign(e.mutable_source_lsn(), s_.source_lsn);
  for (size_t i = 0; i < s_.additional.size(); ++i) {
    v1::Envelope::Field& f = *e.mutable_additional(static_cast<int>(i));
    if (s_.additional[i].null) {
      f.clear_value();
    } else {
      assign(f.mutable_value(), s_.additional[i].text);
    }
  }
  if (!e.SerializeToString(&s_.envelope_bytes)) {
    return absl::InternalError(Cat("could not serialize the envelope of event id=", s_.id.text));
  }
  r.value = s_.envelope_bytes;
  r.headers.push_back(Header{"content-type", kEnvelopeContentType});
  return absl::OkStatus();
}

namespace {

// RFC 3339 UTC with milliseconds ("2026-11-29T11:40:00.123Z") of Unix milliseconds.
std::string Rfc3339Millis(int64_t ms) {
  const int64_t days = (ms >= 0 ? ms : ms - 86399999) / 86400000;
  const int64_t rem = ms - days * 86400000;
  // civil_from_days (Howard Hinnant).
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lld.%03lldZ", static_cast<long long>(y), m, d,
                static_cast<long long>(rem / 3600000), static_cast<long long>(rem / 60000 % 60),
                static_cast<long long>(rem / 1000 % 60), static_cast<long long>(rem % 1000));
  return buf;
}

// Timestamps a record of a streamed transaction carries before its commit is known (Relay's kNoTimestamp).
constexpr int64_t kUnknownTime = INT64_MIN;

}  // namespace

absl::Status OutboxMapper::CompleteEnvelope(Record& record, std::string_view source_lsn) {
  if (config_.format == config::Format::kCloudEvents) {
    s_.ce_time = Rfc3339Millis(record.timestamp_ms);
    for (Header& h : record.headers) {
      if (h.name == "ce_time") h.value = std::string_view(s_.ce_time);
    }
    return absl::OkStatus();
  }
  if (config_.format != config::Format::kProtobuf || !record.value) return absl::OkStatus();
  v1::Envelope& e = *envelope_;
  if (!e.ParseFromArray(record.value->data(), static_cast<int>(record.value->size()))) {
    return absl::InternalError(Cat("the buffered envelope of event id=", record.event_id, " does not parse"));
  }
  e.mutable_source_lsn()->assign(source_lsn.data(), source_lsn.size());
  SetTimestamp(e, record.timestamp_ms);
  if (!e.SerializeToString(&s_.envelope_bytes)) {
    return absl::InternalError(Cat("could not serialize the envelope of event id=", record.event_id));
  }
  record.value = s_.envelope_bytes;
  return absl::OkStatus();
}


// The CloudEvents Kafka protocol binding, binary content mode: the record's value is the event data and the
void OutboxMapper::AddTraceHeaders(Record& r) {
  if (s_.tracing.null) return;
  // java.util.Properties text, as Debezium's tracing reads it; text that is not is no context (no headers).
  absl::StatusOr<std::vector<config::internal::PropertyEntry>> entries =
      config::internal::ParseJavaProperties(s_.tracing.text);
  if (!entries.ok()) return;
  std::string_view traceparent, tracestate;
  for (const config::internal::PropertyEntry& e : *entries) {
    if (e.key == "traceparent") traceparent = e.value;
    if (e.key == "tracestate") tracestate = e.value;
  }
  if (!PropagateTraceContext(traceparent, tracestate, &s_.traceparent, &s_.tracestate)) return;
  if (JsonHeaders()) {
    SetJsonStringHeader(std::string(s_.traceparent), &s_.traceparent);
    if (!s_.tracestate.empty()) SetJsonStringHeader(std::string(s_.tracestate), &s_.tracestate);
  }
  r.headers.push_back(Header{"traceparent", std::string_view(s_.traceparent)});
  if (!s_.tracestate.empty()) r.headers.push_back(Header{"tracestate", std::string_view(s_.tracestate)});
}

absl::StatusOr<bool> OutboxMapper::JavaString(uint32_t type, const std::optional<ConnectColumn>& typed,
                                              std::string_view value, bool hex, std::string* out) {
  out->clear();
  if (type == pg::oid::kBytea && !typed.has_value()) {
    // A key's PostgreSQL hex text as a bytea column's (AppendJavaToString); a payload's decoded bytes as they are.
    if (hex) {
      if (absl::Status st = AppendJavaToString(ConnectColumn{ConnectForm::kBytes}, value, out); !st.ok()) return st;
    } else {
      out->append(JavaByteBufferText(value.size()));
    }
    return true;
  }
  if (!typed.has_value()) return false;  // a string, an integer or an enum: Java's text is PostgreSQL's
  if (absl::Status st = AppendJavaToString(*typed, value, out); !st.ok()) return st;
  return true;
}

absl::Status OutboxMapper::Convert(Record& r) {
  // JsonConverter writes a null with a schema (Debezium gives the key and the payload their column's) as the JSON
  // null: a NULL key, and a NULL payload unless outbox.tombstone_on_empty_payload makes it a tombstone (Debezium's
  // router then drops the value's schema too, and JsonConverter writes no value).
  const config::Converter key_converter = KeyConverter(s_.key_type);
  const config::Converter value_converter = ValueConverter(s_.payload_type);
  const bool json_key = IsJsonConverter(key_converter);
  const bool json_value = IsJsonConverter(value_converter);
  if (key_converter != config::Converter::kString && r.key.has_value()) {
    if (ByteaAsBytes(s_.key_type)) {
      auto bytes = DecodeByteaHex(*r.key);
      if (!bytes.ok()) return bytes.status();
      s_.key_bytes = *std::move(bytes);
      r.key = s_.key_bytes;  // bytes: the key is its raw bytes
    }
  }
  if (json_key) {
    s_.key_out.clear();
    if (absl::Status st = AppendJsonConverted(key_converter, s_.key_schema, s_.key_type, *s_.key_form, r.key,
                                              &s_.key_out);
        !st.ok()) {
      return absl::InvalidArgumentError(Cat(config_.fields.key, " (the key): ", st.message()));
    }
    r.key = s_.key_out;
  }
  if (config_.string_converter_values == config::StringValues::kDebezium) {
    // StringConverter writes Java's text of Debezium's value: of a typed column's, and a bytea's ByteBuffer's (its
    // key as read: PostgreSQL's hex text; its payload: the bytes).
    if (key_converter == config::Converter::kString && r.key.has_value()) {
      absl::StatusOr<bool> wrote = JavaString(s_.key_type, *s_.key_form, *r.key, /*hex=*/true, &s_.key_out);
      if (!wrote.ok()) return absl::InvalidArgumentError(Cat(config_.fields.key, " (the key): ", wrote.status().message()));
      if (*wrote) r.key = s_.key_out;
    }
    // In the envelope too: Struct.toString prints the payload field as Java prints the value.
    if (value_converter == config::Converter::kString && r.value.has_value()) {
      absl::StatusOr<bool> wrote = JavaString(s_.payload_type, *s_.value_form, *r.value, /*hex=*/false, &s_.value_out);
      if (!wrote.ok()) {
        return absl::InvalidArgumentError(Cat(config_.fields.payload, " (the payload): ", wrote.status().message()));
      }
      if (*wrote) r.value = s_.value_out;
    }
  }
  if (json_value && !envelope_placement_ && (r.value.has_value() || !config_.tombstone_on_empty_payload)) {
    s_.value_out.clear();  // r.value holds a bytea payload's decoded bytes (its text under a string binary mode)
    if (absl::Status st = AppendJsonConverted(value_converter, s_.value_schema, s_.payload_type, *s_.value_form,
                                              r.value, &s_.value_out);
        !st.ok()) {
      return absl::InvalidArgumentError(Cat(config_.fields.payload, " (the payload): ", st.message()));
    }
    r.value = s_.value_out;
  }
  return absl::OkStatus();  // bytes: a bytea payload already is its raw bytes
}

const std::string& OutboxMapper::EnvelopeSchemaName(std::string_view payload_schema) {
  // Debezium's EventRouterDelegate caches the envelope's schema by the payload's schema, or by the version when
  // table.field.event.schema.version is set: the route value of the first record names all that share it.
  std::string cache_key = config_.fields.schema_version
                              ? Cat("v:", s_.schema_version.null ? "null" : s_.schema_version.text)
                              : Cat("p:", payload_schema);
  auto it = envelope_names_.find(cache_key);
  if (it == envelope_names_.end()) {
    std::string schema = R"({"type":"struct","fields":[)";
    schema.append(payload_schema);
    schema.pop_back();
    schema.append(R"(,"field":"payload"})");
    for (size_t i = 0; i < s_.additional.size(); ++i) {
      if (placement_[i] != Placement::kEnvelope || s_.additional[i].absent) continue;
      schema.push_back(',');
      schema.append((*s_.bound_additional)[i].schema);
    }
    schema.append(R"(],"optional":false,"name":)");
    AppendJsonString(ReplaceAll(config_.envelope_schema_name, "${routedByValue}", s_.route.text), &schema);
    if (config_.fields.schema_version && !s_.schema_version.null) schema.append(Cat(R"(,"version":)", s_.schema_version.text));
    schema.push_back('}');
    it = envelope_names_.emplace(std::move(cache_key), std::move(schema)).first;
  }
  return it->second;
}

void OutboxMapper::SetJsonStringHeader(std::string_view value, std::string* out) const {
  const bool with_schema = config_.header_values == config::HeaderValues::kJsonSchema;
  std::string json = with_schema ? R"({"schema":{"type":"string","optional":false},"payload":)" : "";
  AppendJsonString(value, &json);
  if (with_schema) json.push_back('}');
  *out = std::move(json);
}

absl::Status OutboxMapper::AppendJsonHeader(const ConnectColumn& form, uint32_t type, std::string_view schema,
                                            std::optional<std::string_view> value, std::string* out) const {
  const bool with_schema = config_.header_values == config::HeaderValues::kJsonSchema;
  if (with_schema) out->append(R"({"schema":)").append(schema).append(R"(,"payload":)");
  if (value.has_value()) {
    if (absl::Status st = AppendConnectJsonValue(form, type, *value, out); !st.ok()) return st;
  } else {
    out->append("null");
  }
  if (with_schema) out->push_back('}');
  return absl::OkStatus();
}

absl::Status OutboxMapper::WriteEnvelope(Record& r) {
  if (!r.value && config_.tombstone_on_empty_payload) return absl::OkStatus();  // a tombstone: no envelope
  // outbox.expand_json_payload: the payload field holds the expanded struct. Where Debezium's expansion left the
  // payload a String under a new schema, Struct.put of the envelope fails for every converter.
  const ExpandedPayload* expanded = nullptr;
  if (ExpandsPayload(r)) {
    switch (s_.expanded.outcome) {
      case ExpandOutcome::kExpanded:
        expanded = &s_.expanded;
        break;
      case ExpandOutcome::kKeptAsText:
        break;
      case ExpandOutcome::kKeptWithoutSchema:
      case ExpandOutcome::kFailsInJsonConverter:
        return absl::InvalidArgumentError(
            Cat("outbox.expand_json_payload: ", s_.expanded.reason.empty() ? "no schema" : s_.expanded.reason,
                "; the envelope (placement envelope) cannot hold the payload under its inferred schema, and "
                "Debezium fails this record too"));
    }
  }
  std::string& out = s_.envelope;
  out.clear();
  const config::Converter converter = config_.value_converter;
  if (converter == config::Converter::kString) {
    // Struct.toString: the fields that are not null, as Java prints each value.
    out.append("Struct{");
    bool first = true;
    if (r.value) {
      out.append("payload=").append(expanded != nullptr ? std::string_view(expanded->text) : *r.value);
      first = false;
    }
    for (size_t i = 0; i < s_.additional.size(); ++i) {
      const Field& f = s_.additional[i];
      if (placement_[i] != Placement::kEnvelope || f.absent || f.null) continue;
      if (!first) out.push_back(',');
      first = false;
      out.append(config_.fields.additional[i].name).push_back('=');
      if (absl::Status st = AppendJavaToString((*s_.bound_additional)[i].form, f.text, &out); !st.ok()) {
        return absl::InvalidArgumentError(Cat("column \"", config_.fields.additional[i].column, "\": ", st.message()));
      }
    }
    out.push_back('}');
    r.value = out;
    return absl::OkStatus();
  }
  if (converter == config::Converter::kJsonSchema) {
    if (expanded != nullptr && 2 + std::max(expanded->schema_depth, expanded->value_depth) > kJacksonMaxWriteDepth) {
      return absl::InvalidArgumentError(Cat("outbox.expand_json_payload: the envelope's schema nests deeper than "
                                            "Jackson writes (", kJacksonMaxWriteDepth, "); Kafka Connect's "
                                            "JsonConverter fails on this payload, as Debezium would"));
    }
    out.append(R"({"schema":)")
        .append(EnvelopeSchemaName(expanded != nullptr ? std::string_view(expanded->schema_json) : s_.value_schema))
        .append(R"(,"payload":)");
  }
  out.append(R"({"payload":)");
  if (expanded != nullptr) {
    out.append(expanded->value_json);
  } else {
    if (absl::Status st = AppendJsonConverted(config::Converter::kJson, "", s_.payload_type, *s_.value_form, r.value,
                                              &out);
        !st.ok()) {
      return absl::InvalidArgumentError(Cat(config_.fields.payload, " (the payload): ", st.message()));
    }
  }
  for (size_t i = 0; i < s_.additional.size(); ++i) {
    const Field& f = s_.additional[i];
    if (placement_[i] != Placement::kEnvelope || f.absent) continue;
    out.push_back(',');
    AppendJsonString(config_.fields.additional[i].name, &out);
    out.push_back(':');
    if (f.null) {
      out.append("null");
      continue;
    }
    const Binding::Additional& a = (*s_.bound_additional)[i];
    if (absl::Status st = AppendConnectJsonValue(a.form, a.type, f.text, &out); !st.ok()) {
      return absl::InvalidArgumentError(Cat("column \"", config_.fields.additional[i].column, "\": ", st.message()));
    }
  }
  out.push_back('}');
  if (converter == config::Converter::kJsonSchema) out.push_back('}');
  r.value = out;
  return absl::OkStatus();
}

// Debezium expands a payload whose value is a String (not a NULL, not a bytea) into a struct, and the value
// converter writes that struct; where the expansion gave up, the payload stays the text Convert wrote. A blank text
// (a tombstone with outbox.tombstone_on_empty_payload) starts with neither { nor [ and is never expanded.
bool OutboxMapper::ExpandsPayload(const Record& r) {
  if (!config_.expand_json_payload || !r.value.has_value() || !ExpandsColumnType(s_.payload_type)) return false;
  s_.expanded = ExpandJsonPayload(s_.payload.text, config_.fields.payload,
                                  ExpandOptions{.null_behavior = config_.json_payload_null_behavior,
                                                .empty_array_behavior = config_.json_payload_empty_array_behavior,
                                                .field_names = config_.json_payload_field_name_adjustment});
  return true;
}

absl::Status OutboxMapper::ExpandPayload(Record& r) {
  if (!ExpandsPayload(r)) return absl::OkStatus();
  const ExpandedPayload& e = s_.expanded;
  const config::Converter converter = config_.value_converter;
  const bool json = IsJsonConverter(converter);
  switch (e.outcome) {
    case ExpandOutcome::kKeptAsText:
      return absl::OkStatus();
    case ExpandOutcome::kKeptWithoutSchema:
      // JsonConverter writes a value without a schema as it finds it: a string.
      if (converter == config::Converter::kJsonSchema) {
        s_.value_out.assign(R"({"schema":null,"payload":)");
        AppendJsonString(s_.payload.text, &s_.value_out);
        s_.value_out.push_back('}');
        r.value = s_.value_out;
      }
      return absl::OkStatus();
    case ExpandOutcome::kFailsInJsonConverter:
      if (!json) return absl::OkStatus();  // StringConverter writes the text under any schema
      return absl::InvalidArgumentError(
          Cat("outbox.expand_json_payload: ", e.reason, "; Kafka Connect's JsonConverter fails on this payload, as "
              "Debezium would"));
    case ExpandOutcome::kExpanded:
      break;
  }
  if (converter == config::Converter::kJsonSchema) {
    if (1 + std::max(e.schema_depth, e.value_depth) > kJacksonMaxWriteDepth) {
      return absl::InvalidArgumentError(Cat("outbox.expand_json_payload: the payload's schema nests deeper than "
                                            "Jackson writes (", kJacksonMaxWriteDepth, "); Kafka Connect's "
                                            "JsonConverter fails on this payload, as Debezium would"));
    }
    s_.value_out = Cat(R"({"schema":)", e.schema_json, R"(,"payload":)", e.value_json, "}");
    r.value = s_.value_out;
  } else if (json) {
    r.value = e.value_json;
  } else {
    r.value = e.text;
  }
  return absl::OkStatus();
}

// attributes are `ce_`-prefixed headers (specversion, id, source, type, time) plus content-type.
void OutboxMapper::AddCloudEventsHeaders(Record& r) {
  s_.ce_source = Cat("/", schema_, "/", table_);
  // A streamed transaction's time is set at its commit (CompleteEnvelope).
  s_.ce_time = r.timestamp_ms == kUnknownTime ? "" : Rfc3339Millis(r.timestamp_ms);
  r.headers.push_back(Header{"ce_specversion", std::string_view("1.0")});
  r.headers.push_back(Header{"ce_id", std::string_view(s_.id.text)});
  r.headers.push_back(Header{"ce_source", std::string_view(s_.ce_source)});
  r.headers.push_back(Header{"ce_type", s_.type.null ? std::string_view(s_.route.text) : std::string_view(s_.type.text)});
  r.headers.push_back(Header{"ce_time", std::string_view(s_.ce_time)});
  r.headers.push_back(Header{"content-type", std::string_view("application/json")});
}

Record OutboxMapper::Original(Lsn commit_lsn, int64_t commit_time_ms) {
  Record r;
  r.event_id = s_.id.text;
  r.key = s_.key.null ? std::nullopt : std::optional<std::string_view>(s_.key.text);
  r.value = s_.payload.null ? std::nullopt : std::optional<std::string_view>(s_.payload.text);
  r.timestamp_ms = commit_time_ms;
  if (commit_lsn != s_.source_lsn_of || s_.source_lsn.empty()) {
    s_.source_lsn_of = commit_lsn;
    s_.source_lsn = commit_lsn.ToString();
  }
  if (!s_.id.null) r.headers.push_back(Header{"id", std::string_view(s_.id.text)});
  for (size_t i = 0; i < config_.fields.additional.size() && i < s_.additional.size(); ++i) {
    const Field& f = s_.additional[i];
    if (f.absent) continue;
    r.headers.push_back(Header{config_.fields.additional[i].name,
                               f.null ? std::nullopt : std::optional<std::string_view>(f.text)});
  }
  r.headers.push_back(Header{"source_lsn", std::string_view(s_.source_lsn)});
  return r;
}

}  // namespace outbox::outbox
