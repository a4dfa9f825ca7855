// Debezium's expanded JSON payload (see json_expand.h): a parser with Jackson's rules, then JsonSchemaData's schema
// inference and value building over Kafka Connect's data model, then the converters' writers.
#include "outbox/json_expand.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "common/strings.h"
#include "outbox/connect_header.h"
#include "pg/type_oids.h"

namespace outbox::outbox {
namespace {

// Jackson's StreamReadConstraints defaults (2.15 and later; 2.21 in Debezium 3.6.1's plugin), which the
// ObjectMapper Debezium's router makes keeps.
constexpr int kMaxDepth = 1000;
constexpr size_t kMaxNumberLength = 1000;
constexpr size_t kMaxStringLength = 20'000'000;  // UTF-16 code units
constexpr size_t kMaxNameLength = 50'000;

// One node of Jackson's tree (readTree's JsonNode).
struct Member;

struct Node {
  enum class Kind : uint8_t { kNull, kBoolean, kString, kInt, kLong, kBigInteger, kDouble, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  int64_t integer = 0;  // kInt, kLong
  double number = 0;    // kDouble
  // kString: the characters in UTF-8, a lone surrogate (which a \u escape can make) as its three WTF-8 bytes;
  // kBigInteger: the literal.
  std::string text;
  std::vector<Node> elements;                         // kArray
  std::vector<Member> members;  // kObject: a key once, a repeated key's last value in its first place
                                // (ObjectNode.replace over a LinkedHashMap)

  const Node* Find(std::string_view key) const;
};

struct Member {
  std::string first;
  Node second;
};

const Node* Node::Find(std::string_view key) const {
  for (const Member& m : members) {
    if (m.first == key) return &m.second;
  }
  return nullptr;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// JSON as Jackson's ObjectMapper.readTree reads it with its default features: no comments, no single quotes, no
// unquoted names, no leading zeros, no NaN, no trailing commas, no raw control characters in strings; space, tab,
// CR and LF as white space. Reads the first value only: readTree does not look past it.
class Parser {
 public:
  explicit Parser(std::string_view in) : in_(in) {}

  absl::StatusOr<Node> Root() {
    Node root;
    if (absl::Status st = Value(root, 0); !st.ok()) return st;
    return root;
  }

 private:
  absl::Status Fail(std::string_view what) const {
    return absl::InvalidArgumentError(Cat(what, " at byte ", pos_));
  }
  bool Consume(char c) {
    if (pos_ < in_.size() && in_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void SkipSpace() {
    while (pos_ < in_.size() && (in_[pos_] == ' ' || in_[pos_] == '\t' || in_[pos_] == '\n' || in_[pos_] == '\r')) {
      ++pos_;
    }
  }

  absl::Status Value(Node& out, int depth) {
    SkipSpace();
    if (pos_ >= in_.size()) return Fail("unexpected end of input");
    switch (in_[pos_]) {
      case '{':
        return Object(out, depth + 1);
      case '[':
        return Array(out, depth + 1);
      case '"':
        out.kind = Node::Kind::kString;
        return String(out.text, kMaxStringLength);
      case 't':
        out.kind = Node::Kind::kBoolean;
        out.boolean = true;
        return Literal("true");
      case 'f':
        out.kind = Node::Kind::kBoolean;
        return Literal("false");
      case 'n':
        out.kind = Node::Kind::kNull;
        return Literal("null");
      default:
        return Number(out);
    }
  }

  absl::Status Literal(std::string_view word) {
    if (in_.substr(pos_, word.size()) != word) return Fail("unrecognized token");
    pos_ += word.size();
    return absl::OkStatus();
  }

  absl::Status Object(Node& out, int depth) {
    if (depth > kMaxDepth) return Fail("nesting depth exceeds 1000");
    ++pos_;
    out.kind = Node::Kind::kObject;
    SkipSpace();
    if (Consume('}')) return absl::OkStatus();
    absl::flat_hash_map<std::string, size_t> index;  // key -> its place in members
    while (true) {
      SkipSpace();
      if (pos_ >= in_.size() || in_[pos_] != '"') return Fail("expected a field name");
      std::string name;
      if (absl::Status st = String(name, kMaxNameLength); !st.ok()) return st;
      SkipSpace();
      if (!Consume(':')) return Fail("expected ':'");
      Node value;
      if (absl::Status st = Value(value, depth); !st.ok()) return st;
      const auto [it, inserted] = index.try_emplace(name, out.members.size());
      if (inserted) {
        out.members.push_back(Member{std::move(name), std::move(value)});
      } else {
        out.members[it->second].second = std::move(value);
      }
      SkipSpace();
      if (Consume(',')) continue;
      if (Consume('}')) return absl::OkStatus();
      return Fail("expected ',' or '}'");
    }
  }

  absl::Status Array(Node& out, int depth) {
    if (depth > kMaxDepth) return Fail("nesting depth exceeds 1000");
    ++pos_;
    out.kind = Node::Kind::kArray;
    SkipSpace();
    if (Consume(']')) return absl::OkStatus();
    while (true) {
      if (absl::Status st = Value(out.elements.emplace_back(), depth); !st.ok()) return st;
      SkipSpace();
      if (Consume(',')) continue;
      if (Consume(']')) return absl::OkStatus();
      return Fail("expected ',' or ']'");
    }
  }

  absl::Status Hex4(unsigned* unit) {
    if (pos_ + 4 > in_.size()) return Fail("bad \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = in_[pos_++];
      const int d = IsDigit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
      if (d < 0) return Fail("bad \\u escape");
      v = v * 16 + static_cast<unsigned>(d);
    }
    *unit = v;
    return absl::OkStatus();
  }

  // A string from its opening quote; `max_units`: Jackson's limit in UTF-16 code units.
  absl::Status String(std::string& out, size_t max_units) {
    ++pos_;
    size_t units = 0;
    while (true) {
      if (pos_ >= in_.size()) return Fail("unterminated string");
      const unsigned char c = static_cast<unsigned char>(in_[pos_]);
      if (c == '"') {
        ++pos_;
        break;
      }
      if (c < 0x20) return Fail("unescaped control character in a string");
      if (c != '\\') {
        const size_t len = c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        out.append(in_.substr(pos_, len));
        pos_ += len;
        units += len == 4 ? 2 : 1;
        continue;
      }
      ++pos_;
      if (pos_ >= in_.size()) return Fail("unterminated string");
      const char e = in_[pos_++];
      ++units;
      switch (e) {
        case '"': case '\\': case '/': out.push_back(e); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          unsigned unit = 0;
          if (absl::Status st = Hex4(&unit); !st.ok()) return st;
          // A high surrogate escape right before a low one: one character beyond U+FFFF, in UTF-8.
          if (unit >= 0xD800 && unit <= 0xDBFF && in_.substr(pos_, 2) == "\\u") {
            const size_t back = pos_;
            pos_ += 2;
            unsigned low = 0;
            if (Hex4(&low).ok() && low >= 0xDC00 && low <= 0xDFFF) {
              AppendUtf8(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00), &out);
              ++units;
              break;
            }
            pos_ = back;  // read again as an escape of its own
          }
          AppendUtf8(unit, &out);  // a lone surrogate as WTF-8
          break;
        }
        default:
          return Fail("unrecognized character escape");
      }
    }
    if (units > max_units) return Fail("string longer than Jackson reads");
    return absl::OkStatus();
  }

  // A number as Jackson classifies it: an integer in int range, long range or beyond (BigInteger); anything with a
  // fraction or an exponent a double (Double.parseDouble: correctly rounded, out of range to infinity or zero).
  absl::Status Number(Node& out) {
    const size_t start = pos_;
    Consume('-');
    const size_t int_start = pos_;
    if (pos_ >= in_.size() || !IsDigit(in_[pos_])) return Fail("unexpected character");
    if (in_[pos_] == '0' && pos_ + 1 < in_.size() && IsDigit(in_[pos_ + 1])) return Fail("leading zero");
    while (pos_ < in_.size() && IsDigit(in_[pos_])) ++pos_;
    const size_t int_len = pos_ - int_start;
    size_t fraction_len = 0, exponent_len = 0;
    bool floating = false;
    if (Consume('.')) {
      floating = true;
      while (pos_ < in_.size() && IsDigit(in_[pos_])) ++pos_, ++fraction_len;
      if (fraction_len == 0) return Fail("decimal point not followed by a digit");
    }
    if (Consume('e') || Consume('E')) {
      floating = true;
      if (!Consume('+')) Consume('-');
      while (pos_ < in_.size() && IsDigit(in_[pos_])) ++pos_, ++exponent_len;
      if (exponent_len == 0) return Fail("exponent indicator not followed by a digit");
    }
    const std::string_view literal = in_.substr(start, pos_ - start);
    if (floating) {
      // Jackson counts no integer digit for a lone 0 ("0.5").
      const size_t counted_int_len = in_[int_start] == '0' ? 0 : int_len;
      if (counted_int_len + fraction_len + exponent_len > kMaxNumberLength) {
        return Fail("number longer than Jackson reads");
      }
      out.kind = Node::Kind::kDouble;
      out.number = std::strtod(std::string(literal).c_str(), nullptr);
      return absl::OkStatus();
    }
    if (int_len > kMaxNumberLength) return Fail("number longer than Jackson reads");
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(literal.data(), literal.data() + literal.size(), v);
    if (ec != std::errc() || end != literal.data() + literal.size()) {
      out.kind = Node::Kind::kBigInteger;
      out.text = std::string(literal);
    } else {
      out.kind = v >= INT32_MIN && v <= INT32_MAX ? Node::Kind::kInt : Node::Kind::kLong;
      out.integer = v;
    }
    return absl::OkStatus();
  }

  std::string_view in_;
  size_t pos_ = 0;
};

// A Kafka Connect schema (ConnectSchema), as JsonSchemaData builds them: no versions, docs or parameters.
struct Schema;
using SchemaPtr = std::shared_ptr<const Schema>;
struct Schema {
  enum class Type : uint8_t { kInt32, kInt64, kFloat64, kBoolean, kString, kBytes, kArray, kStruct };
  Type type = Type::kString;
  bool optional = true;
  std::optional<std::string> name;
  std::vector<std::pair<std::string, SchemaPtr>> fields;  // kStruct, in order
  SchemaPtr items;                                        // kArray

  const SchemaPtr* Field(std::string_view field) const {
    for (const auto& [n, s] : fields) {
      if (n == field) return &s;
    }
    return nullptr;
  }
};

// ConnectSchema.equals: every part, fields in order.
bool operator==(const Schema& a, const Schema& b) {
  if (a.type != b.type || a.optional != b.optional || a.name != b.name || a.fields.size() != b.fields.size()) {
    return false;
  }
  if ((a.items == nullptr) != (b.items == nullptr) || (a.items != nullptr && !(*a.items == *b.items))) return false;
  for (size_t i = 0; i < a.fields.size(); ++i) {
    if (a.fields[i].first != b.fields[i].first || !(*a.fields[i].second == *b.fields[i].second)) return false;
  }
  return true;
}

SchemaPtr Primitive(Schema::Type type) {
  auto s = std::make_shared<Schema>();
  s->type = type;
  return s;
}

// JsonSchemaData.toConnectSchema and its helpers. An error where Debezium throws; a null SchemaPtr where it
// returns null (a null or an empty array the options ignore: the field is left out).
class SchemaInference {
 public:
  explicit SchemaInference(const ExpandOptions& options) : options_(options) {}

  // `key` null: Java's null key (the element schema of an array of scalars or arrays).
  absl::StatusOr<SchemaPtr> Infer(const std::string* key, const Node& node) const {
    switch (node.kind) {
      case Node::Kind::kString:
        return Primitive(Schema::Type::kString);
      case Node::Kind::kBoolean:
        return Primitive(Schema::Type::kBoolean);
      case Node::Kind::kInt:
      case Node::Kind::kLong:
      case Node::Kind::kBigInteger:
      case Node::Kind::kDouble:
        return Primitive(NumberType(node));
      case Node::Kind::kNull:
        return options_.null_behavior == config::JsonNullBehavior::kOptionalBytes ? Primitive(Schema::Type::kBytes)
                                                                                 : nullptr;
      case Node::Kind::kArray: {
        if (node.elements.empty()) {
          if (options_.empty_array_behavior == config::JsonEmptyArrayBehavior::kIgnore) return nullptr;
          auto array = std::make_shared<Schema>();
          array->type = Schema::Type::kArray;
          array->items = Primitive(Schema::Type::kString);
          return array;
        }
        absl::StatusOr<SchemaPtr> items = ElementSchema(key, node);
        if (!items.ok()) return items.status();
        if (*items == nullptr) return absl::InvalidArgumentError("valueSchema cannot be null");
        auto array = std::make_shared<Schema>();
        array->type = Schema::Type::kArray;
        array->items = *std::move(items);
        return array;
      }
      case Node::Kind::kObject: {
        auto schema = std::make_shared<Schema>();
        schema->type = Schema::Type::kStruct;
        if (key != nullptr) schema->name = *key;
        for (const auto& [member, value] : node.members) {
          // FieldNamer.fieldNameFor: the adjusted name names the field and, in the key, nested structs.
          const std::string name = AdjustFieldName(member, options_.field_names);
          const std::string field_key = (IsNullOrBlank(key) ? std::string() : *key + ".") + name;
          absl::StatusOr<SchemaPtr> field = Infer(&field_key, value);
          if (!field.ok()) return field.status();
          if (*field == nullptr || schema->Field(name) != nullptr) continue;
          if (name.empty()) return absl::InvalidArgumentError("a field name is empty (SchemaBuilder refuses it)");
          schema->fields.emplace_back(name, *std::move(field));
        }
        return schema;
      }
    }
    return absl::InternalError("unknown node");
  }

 private:
  // Jackson's number class as a schema type: IntNode INT32, LongNode INT64, DoubleNode and BigIntegerNode FLOAT64.
  static Schema::Type NumberType(const Node& node) {
    if (node.kind == Node::Kind::kInt) return Schema::Type::kInt32;
    if (node.kind == Node::Kind::kLong) return Schema::Type::kInt64;
    return Schema::Type::kFloat64;
  }
  static bool IsNumber(const Node& node) {
    return node.kind == Node::Kind::kInt || node.kind == Node::Kind::kLong || node.kind == Node::Kind::kBigInteger ||
           node.kind == Node::Kind::kDouble;
  }

  // Debezium's Strings.isNullOrBlank: null, or nothing left once String.trim removes characters up to U+0020.
  static bool IsNullOrBlank(const std::string* key) {
    return key == nullptr ||
           std::all_of(key->begin(), key->end(), [](char c) { return static_cast<unsigned char>(c) <= 0x20; });
  }

  // getFirstArrayElement: the first element that is not null (nullptr: none), after checking that the others
  // have its node type and, for numbers, its schema.
  static absl::StatusOr<const Node*> Sample(const Node& array) {
    const Node* sample = nullptr;
    for (const Node& element : array.elements) {
      if (element.kind == Node::Kind::kNull) continue;
      if (sample == nullptr) sample = &element;
      const bool same = IsNumber(*sample) ? IsNumber(element) && NumberType(*sample) == NumberType(element)
                                          : element.kind == sample->kind;
      if (!same) return absl::InvalidArgumentError("field is not a homogenous array");
    }
    return sample;
  }

  // toConnectSchemaWithCycles: an array of objects merges its objects' schemas, any other takes its first
  // element's.
  absl::StatusOr<SchemaPtr> ElementSchema(const std::string* key, const Node& array) const {
    absl::StatusOr<const Node*> sample = Sample(array);
    if (!sample.ok()) return sample.status();
    if (*sample != nullptr && (*sample)->kind == Node::Kind::kObject) {
      // Debezium collects the distinct schemas in a HashSet; here they keep the order their elements come in.
      std::vector<SchemaPtr> distinct;
      for (const Node& element : array.elements) {
        if (element.kind != Node::Kind::kObject) continue;
        absl::StatusOr<SchemaPtr> schema = Infer(key, element);
        if (!schema.ok()) return schema.status();
        if (std::none_of(distinct.begin(), distinct.end(), [&](const SchemaPtr& s) { return *s == **schema; })) {
          distinct.push_back(*std::move(schema));
        }
      }
      SchemaPtr merged;
      for (const SchemaPtr& schema : distinct) merged = Merge(merged, schema);
      return merged;
    }
    Node null_node;
    absl::StatusOr<SchemaPtr> schema = Infer(nullptr, *sample != nullptr ? **sample : null_node);
    if (schema.ok() && *schema == nullptr) return absl::InvalidArgumentError("array has unrecognized member schema");
    return schema;
  }

  // mergeSchema: left's fields, then right's new ones; a field both have keeps left's schema unless that is bytes
  // (a null) and right's is not. The result is built from SchemaUtil.copySchemaBasics(left), which copies the name
  // but not `optional`: a merged schema is required.
  static SchemaPtr Merge(const SchemaPtr& left, const SchemaPtr& right) {
    if (left == nullptr) return right;
    auto merged = std::make_shared<Schema>();
    merged->type = left->type;
    merged->name = left->name;
    merged->optional = false;
    merged->fields = left->fields;
    for (const auto& field : right->fields) {
      const std::string& name = field.first;
      const auto& schema = field.second;
      auto it = std::find_if(merged->fields.begin(), merged->fields.end(), [&](const auto& f) { return f.first == name; });
      if (it == merged->fields.end()) {
        merged->fields.emplace_back(name, schema);
      } else if (!(*it->second == *schema) && it->second->type == Schema::Type::kBytes &&
                 schema->type != Schema::Type::kBytes) {
        it->second = schema;
      }
    }
    return merged;
  }

  const ExpandOptions& options_;
};

// A Kafka Connect value as JsonSchemaData.toConnectData builds it.
struct Value {
  enum class Kind : uint8_t { kNull, kBoolean, kInt32, kInt64, kDouble, kBigDecimal, kString, kList, kStruct };
  Kind kind = Kind::kNull;
  bool boolean = false;
  int64_t integer = 0;
  double number = 0;
  std::string text;           // kString (WTF-8), kBigDecimal (the literal)
  std::vector<Value> items;   // kList; kStruct: one per field of `schema`, kNull where not put
  const Schema* schema = nullptr;  // kStruct
};

std::string_view TypeName(Schema::Type type) {
  switch (type) {
    case Schema::Type::kInt32: return "int32";
    case Schema::Type::kInt64: return "int64";
    case Schema::Type::kFloat64: return "double";
    case Schema::Type::kBoolean: return "boolean";
    case Schema::Type::kString: return "string";
    case Schema::Type::kBytes: return "bytes";
    case Schema::Type::kArray: return "array";
    case Schema::Type::kStruct: return "struct";
  }
  return "";
}

// ConnectSchema.validateValue: null only where optional, the Java class the type expects, and the same for what a
// struct or a list holds.
absl::Status Validate(const Schema& schema, const Value& value) {
  if (value.kind == Value::Kind::kNull) {
    if (schema.optional) return absl::OkStatus();
    return absl::InvalidArgumentError(Cat("null used for a required ", TypeName(schema.type)));
  }
  Value::Kind expected = Value::Kind::kNull;  // kBytes: byte[], which a JSON value never is
  switch (schema.type) {
    case Schema::Type::kInt32: expected = Value::Kind::kInt32; break;
    case Schema::Type::kInt64: expected = Value::Kind::kInt64; break;
    case Schema::Type::kFloat64: expected = Value::Kind::kDouble; break;
    case Schema::Type::kBoolean: expected = Value::Kind::kBoolean; break;
    case Schema::Type::kString: expected = Value::Kind::kString; break;
    case Schema::Type::kBytes: break;
    case Schema::Type::kArray: expected = Value::Kind::kList; break;
    case Schema::Type::kStruct: expected = Value::Kind::kStruct; break;
  }
  if (value.kind != expected) {
    return absl::InvalidArgumentError(
        Cat("a value does not fit its schema type ", TypeName(schema.type),
            value.kind == Value::Kind::kBigDecimal ? Cat(" (", value.text, " is beyond long: a BigDecimal)") : ""));
  }
  if (schema.type == Schema::Type::kStruct) {
    if (value.schema != &schema && !(*value.schema == schema)) return absl::InvalidArgumentError("struct schemas do not match");
    for (size_t i = 0; i < schema.fields.size(); ++i) {
      if (absl::Status st = Validate(*schema.fields[i].second, value.items[i]); !st.ok()) return st;
    }
  }
  if (schema.type == Schema::Type::kArray) {
    for (const Value& item : value.items) {
      if (absl::Status st = Validate(*schema.items, item); !st.ok()) return st;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Value> StructOf(const Node& document, const Schema& schema);

// getStructFieldValue: a node's value under `schema`. A list under a schema that is no array, or a struct under
// one that is no struct, throws in Debezium (or fails the field's validation right after).
absl::StatusOr<Value> FieldValue(const Node& node, const Schema& schema) {
  Value v;
  switch (node.kind) {
    case Node::Kind::kNull:
      return v;
    case Node::Kind::kBoolean:
      v.kind = Value::Kind::kBoolean;
      v.boolean = node.boolean;
      return v;
    case Node::Kind::kString:
      v.kind = Value::Kind::kString;
      v.text = node.text;
      return v;
    case Node::Kind::kInt:
    case Node::Kind::kLong:
      v.kind = node.kind == Node::Kind::kInt ? Value::Kind::kInt32 : Value::Kind::kInt64;
      v.integer = node.integer;
      return v;
    case Node::Kind::kDouble:
      v.kind = Value::Kind::kDouble;
      v.number = node.number;
      return v;
    case Node::Kind::kBigInteger:
      v.kind = Value::Kind::kBigDecimal;
      v.text = node.text;
      return v;
    case Node::Kind::kArray:
      if (schema.type != Schema::Type::kArray) {
        return absl::InvalidArgumentError(Cat("an array where the schema has ", TypeName(schema.type)));
      }
      v.kind = Value::Kind::kList;
      for (const Node& element : node.elements) {
        absl::StatusOr<Value> item = FieldValue(element, *schema.items);
        if (!item.ok()) return item.status();
        v.items.push_back(*std::move(item));
      }
      return v;
    case Node::Kind::kObject:
      return StructOf(node, schema);
  }
  return absl::InternalError("unknown node");
}

// jsonNodeToStructInternal: a Struct of `schema` with the document's value of each of its fields that the
// document has, each checked as Struct.put checks it. A field whose name was adjusted is looked up by that name, as
// Debezium looks it up: a document without that key leaves it null (a-b: 1 gives a_b: null under avro).
absl::StatusOr<Value> StructOf(const Node& document, const Schema& schema) {
  if (schema.type != Schema::Type::kStruct) {
    return absl::InvalidArgumentError(Cat("an object where the schema has ", TypeName(schema.type)));
  }
  Value v;
  v.kind = Value::Kind::kStruct;
  v.schema = &schema;
  v.items.resize(schema.fields.size());
  for (size_t i = 0; i < schema.fields.size(); ++i) {
    const auto& [name, field_schema] = schema.fields[i];
    const Node* member = document.Find(name);
    if (member == nullptr) continue;
    absl::StatusOr<Value> field = FieldValue(*member, *field_schema);
    if (!field.ok()) return field.status();
    if (absl::Status st = Validate(*field_schema, *field); !st.ok()) {
      return absl::InvalidArgumentError(Cat("field \"", name, "\": ", st.message()));
    }
    v.items[i] = *std::move(field);
  }
  return v;
}

// The three bytes of a lone surrogate in WTF-8 (ED A0..BF 80..BF) at `i`, as its code unit; 0 if none there.
unsigned LoneSurrogateAt(std::string_view text, size_t i) {
  if (i + 2 >= text.size() || static_cast<unsigned char>(text[i]) != 0xED) return 0;
  const unsigned b1 = static_cast<unsigned char>(text[i + 1]), b2 = static_cast<unsigned char>(text[i + 2]);
  if (b1 < 0xA0 || b1 > 0xBF || b2 < 0x80 || b2 > 0xBF) return 0;
  return 0xD000 | ((b1 & 0x3F) << 6) | (b2 & 0x3F);
}

// A Java string as Jackson writes it: AppendJsonString's escapes, and a lone surrogate as its \uXXXX.
void AppendJavaJsonString(std::string_view text, std::string* out) {
  out->push_back('"');
  size_t segment = 0;
  std::string piece;
  const auto flush = [&](size_t end) {
    piece.clear();
    AppendJsonString(text.substr(segment, end - segment), &piece);
    out->append(piece, 1, piece.size() - 2);  // without its quotes
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned unit = LoneSurrogateAt(text, i);
    if (unit == 0) continue;
    flush(i);
    out->append(absl::StrFormat("\\u%04X", unit));
    i += 2;
    segment = i + 1;
  }
  flush(text.size());
  out->push_back('"');
}

// A Java string as StringConverter's UTF-8 encoder writes it: a lone surrogate becomes '?'.
void AppendJavaUtf8(std::string_view text, std::string* out) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (LoneSurrogateAt(text, i) != 0) {
      out->push_back('?');
      i += 2;
    } else {
      out->push_back(text[i]);
    }
  }
}

// Double.toString (Java 19 and later), Infinity and -Infinity included.
std::string JavaDouble(double v) {
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  absl::StatusOr<std::string> text = JavaDoubleText(std::string_view(buf, static_cast<size_t>(end - buf)), false);
  return text.ok() ? *std::move(text) : std::string(buf, end);
}

// JsonConverter.asJsonSchema; `field`: the name a struct's field entry carries last.
void AppendSchemaJson(const Schema& schema, const std::string* field, std::string* out) {
  out->append(R"({"type":")").append(TypeName(schema.type)).push_back('"');
  if (schema.type == Schema::Type::kStruct) {
    out->append(R"(,"fields":[)");
    for (size_t i = 0; i < schema.fields.size(); ++i) {
      if (i > 0) out->push_back(',');
      AppendSchemaJson(*schema.fields[i].second, &schema.fields[i].first, out);
    }
    out->push_back(']');
  } else if (schema.type == Schema::Type::kArray) {
    out->append(R"(,"items":)");
    AppendSchemaJson(*schema.items, nullptr, out);
  }
  out->append(R"(,"optional":)").append(schema.optional ? "true" : "false");
  if (schema.name.has_value()) {
    out->append(R"(,"name":)");
    AppendJavaJsonString(*schema.name, out);
  }
  if (field != nullptr) {
    out->append(R"(,"field":)");
    AppendJavaJsonString(*field, out);
  }
  out->push_back('}');
}

// JsonConverter.convertToJson (schemas.enable=false), Jackson's compact output.
absl::Status AppendValueJson(const Schema& schema, const Value& value, std::string* out) {
  switch (value.kind) {
    case Value::Kind::kNull:
      if (!schema.optional) return absl::InvalidArgumentError("null value for a required field");
      out->append("null");
      return absl::OkStatus();
    case Value::Kind::kBoolean:
      out->append(value.boolean ? "true" : "false");
      return absl::OkStatus();
    case Value::Kind::kInt32:
    case Value::Kind::kInt64:
      out->append(std::to_string(value.integer));
      return absl::OkStatus();
    case Value::Kind::kDouble:
      // Jackson quotes what is not finite (QUOTE_NON_NUMERIC_NUMBERS).
      if (std::isinf(value.number)) {
        out->append(Cat("\"", JavaDouble(value.number), "\""));
      } else {
        out->append(JavaDouble(value.number));
      }
      return absl::OkStatus();
    case Value::Kind::kString:
      AppendJavaJsonString(value.text, out);
      return absl::OkStatus();
    case Value::Kind::kBigDecimal:
      return absl::InvalidArgumentError("a BigDecimal under a double schema");
    case Value::Kind::kList:
      out->push_back('[');
      for (size_t i = 0; i < value.items.size(); ++i) {
        if (i > 0) out->push_back(',');
        if (absl::Status st = AppendValueJson(*schema.items, value.items[i], out); !st.ok()) return st;
      }
      out->push_back(']');
      return absl::OkStatus();
    case Value::Kind::kStruct:
      out->push_back('{');
      for (size_t i = 0; i < schema.fields.size(); ++i) {
        if (i > 0) out->push_back(',');
        AppendJavaJsonString(schema.fields[i].first, out);
        out->push_back(':');
        if (absl::Status st = AppendValueJson(*schema.fields[i].second, value.items[i], out); !st.ok()) return st;
      }
      out->push_back('}');
      return absl::OkStatus();
  }
  return absl::InternalError("unknown value");
}

// Struct.toString (null fields left out) and the Java toString of what it holds: a List as [a, b], a null in
// one as null.
void AppendToString(const Value& value, std::string* out) {
  switch (value.kind) {
    case Value::Kind::kNull: out->append("null"); return;
    case Value::Kind::kBoolean: out->append(value.boolean ? "true" : "false"); return;
    case Value::Kind::kInt32:
    case Value::Kind::kInt64: out->append(std::to_string(value.integer)); return;
    case Value::Kind::kDouble: out->append(JavaDouble(value.number)); return;
    case Value::Kind::kString:
    case Value::Kind::kBigDecimal: AppendJavaUtf8(value.text, out); return;
    case Value::Kind::kList:
      out->push_back('[');
      for (size_t i = 0; i < value.items.size(); ++i) {
        if (i > 0) out->append(", ");
        AppendToString(value.items[i], out);
      }
      out->push_back(']');
      return;
    case Value::Kind::kStruct: {
      out->append("Struct{");
      bool first = true;
      for (size_t i = 0; i < value.items.size(); ++i) {
        if (value.items[i].kind == Value::Kind::kNull) continue;
        if (!first) out->push_back(',');
        first = false;
        AppendJavaUtf8(value.schema->fields[i].first, out);
        out->push_back('=');
        AppendToString(value.items[i], out);
      }
      out->push_back('}');
      return;
    }
  }
}

// How deep Jackson's writer nests the containers of `json` (the outermost counts 1).
int JsonDepth(std::string_view json) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') ++i;
      if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

// A WTF-8 string's Java characters (UTF-16 code units): a character beyond U+FFFF as its two surrogates, a lone
// surrogate as itself.
std::vector<unsigned> JavaChars(std::string_view text) {
  std::vector<unsigned> units;
  for (size_t i = 0; i < text.size();) {
    const unsigned char lead = static_cast<unsigned char>(text[i]);
    const size_t len = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    unsigned cp = len == 1 ? lead : len == 2 ? lead & 0x1F : len == 3 ? lead & 0x0F : lead & 0x07;
    for (size_t k = 1; k < len && i + k < text.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    i += len;
    if (cp > 0xFFFF) {
      units.push_back(0xD800 + ((cp - 0x10000) >> 10));
      units.push_back(0xDC00 + ((cp - 0x10000) & 0x3FF));
    } else {
      units.push_back(cp);
    }
  }
  return units;
}

bool IsAsciiLetter(unsigned c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

}  // namespace

std::string AdjustFieldName(const std::string& name, config::FieldNameAdjustment mode) {
  if (mode == config::FieldNameAdjustment::kNone) return name;
  const bool unicode = mode == config::FieldNameAdjustment::kAvroUnicode;
  // SchemaNameAdjuster.validFullname with FieldNameUnderscoreReplacementFunction or
  // FieldNameUnicodeReplacementFunction.
  const auto legal = [&](unsigned c, bool first) {
    return IsAsciiLetter(c) || (!unicode && c == '_') || (!first && c >= '0' && c <= '9');
  };
  const std::vector<unsigned> chars = JavaChars(name);
  std::string out;  // legal characters are ASCII
  for (size_t i = 0; i < chars.size(); ++i) {
    const unsigned c = chars[i];
    if (legal(c, i == 0)) {
      out.push_back(static_cast<char>(c));
    } else if (!unicode) {
      out.push_back('_');
      if (i == 0 && c >= '0' && c <= '9') out.push_back(static_cast<char>(c));
    } else {
      const std::string hex = absl::StrFormat("%x", c);
      out.append("_u").append(hex.size() <= 2 ? "00" : "").append(hex);
    }
  }
  return out;
}

bool ExpandsColumnType(uint32_t type_oid) {
  if (type_oid == pg::oid::kInt2 || type_oid == pg::oid::kInt4 || type_oid == pg::oid::kInt8 ||
      type_oid == pg::oid::kOid) {
    return false;  // Integer and Long in Debezium
  }
  absl::StatusOr<ConnectColumn> column = ConnectColumnOf(type_oid, -1);
  return column.ok() && column->form == ConnectForm::kText;
}

ExpandedPayload ExpandJsonPayload(std::string_view text, std::string_view field_name, const ExpandOptions& options) {
  ExpandedPayload out;
  // parseJsonPayload: only text that starts with { or [ (no white space first) is read.
  if (text.empty() || (text.front() != '{' && text.front() != '[')) {
    out.reason = "the payload does not start with { or [";
    return out;
  }
  absl::StatusOr<Node> tree = Parser(text).Root();
  if (!tree.ok()) {
    out.reason = Cat("the payload is not JSON Jackson reads: ", tree.status().message());
    return out;
  }
  const std::string root_name(field_name);
  absl::StatusOr<SchemaPtr> schema = SchemaInference(options).Infer(&root_name, *tree);
  if (!schema.ok()) {
    out.reason = Cat("no schema for the payload: ", schema.status().message());
    return out;
  }
  if (*schema == nullptr) {
    out.outcome = ExpandOutcome::kKeptWithoutSchema;
    out.reason = "the payload's schema is null (an empty array)";
    return out;
  }
  AppendSchemaJson(**schema, nullptr, &out.schema_json);
  absl::StatusOr<Value> value = StructOf(*tree, **schema);
  if (value.ok()) {
    if (absl::Status st = AppendValueJson(**schema, *value, &out.value_json); !st.ok()) value = st;
  }
  if (!value.ok()) {
    out.outcome = ExpandOutcome::kFailsInJsonConverter;
    out.reason = Cat("the payload does not fit the schema inferred from it: ", value.status().message());
    out.value_json.clear();
    return out;
  }
  AppendToString(*value, &out.text);
  out.schema_depth = JsonDepth(out.schema_json);
  out.value_depth = JsonDepth(out.value_json);
  out.outcome = ExpandOutcome::kExpanded;
  return out;
}

}  // namespace outbox::outbox
