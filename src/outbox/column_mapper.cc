#include "outbox/column_mapper.h"

#include <openssl/evp.h>

#include <algorithm>
#include <memory>

#include "absl/status/status.h"
#include "common/strings.h"
#include "pg/type_oids.h"

namespace outbox::outbox {
namespace {

using Kind = config::ColumnMapperRule::Kind;

// ColumnMappers.create's order: truncations, masks with characters, the propagations, hashes, hashes v2.
int Rank(Kind kind) {
  switch (kind) {
    case Kind::kTruncate: return 0;
    case Kind::kMask: return 1;
    case Kind::kHash: return 3;
    case Kind::kHashV2: return 4;
  }
  return 5;
}
constexpr int kPropagationRank = 2;

// The bytes of the UTF-8 sequence that starts with `lead` (1 for a stray byte, which PostgreSQL's text never has).
size_t SequenceLength(unsigned char lead) {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

// Whether Debezium's value of a column of this form is a Java String holding the column's PostgreSQL text (so that a
// String mapper works on that text), a ByteBuffer of a bytea's bytes, another String, or no String at all.
enum class ValueKind : uint8_t { kColumnText, kByteBuffer, kOtherString, kNotAString };

ValueKind ValueKindOf(ConnectForm form, uint32_t type) {
  switch (form) {
    case ConnectForm::kText: return IsIntegerType(type) ? ValueKind::kNotAString : ValueKind::kColumnText;
    case ConnectForm::kEnum: return ValueKind::kColumnText;
    case ConnectForm::kBytes: return ValueKind::kByteBuffer;
    case ConnectForm::kZonedTimestamp:
    case ConnectForm::kZonedTime:
    case ConnectForm::kHstore:
    case ConnectForm::kBinaryString:
    case ConnectForm::kIsoDate:
    case ConnectForm::kIsoTime:
    case ConnectForm::kIsoTimestamp:
    case ConnectForm::kIntervalString:
    case ConnectForm::kDecimalString:
    case ConnectForm::kMoneyString: return ValueKind::kOtherString;
    default: return ValueKind::kNotAString;  // numbers, booleans, java.util.Dates, structs, lists, maps, byte[]
  }
}

}  // namespace

ColumnMappers::ColumnMappers(const std::vector<config::ColumnMapperRule>& rules) {
  for (const config::ColumnMapperRule& rule : rules) {
    // The config layer refuses a list that does not compile.
    rules_.push_back(Rule{rule, config::CompileDebeziumPatternList(rule.columns).value_or(
                                    std::vector<config::RouteRegex>{})});
  }
}

absl::StatusOr<ColumnValueMap> ColumnMappers::For(const MappedColumn& c) const {
  ColumnValueMap out;
  if (rules_.empty()) return out;
  if (!IsAscii(c.qualified)) {
    return absl::FailedPreconditionError(
        Cat("outbox.column_mappers: ", c.qualified, " has characters beyond ASCII, whose case Debezium's patterns "
            "(Java's, ignoring ASCII case) and the relay's fold differently"));
  }
  const Rule* first = nullptr;
  for (const Rule& r : rules_) {
    if (!std::any_of(r.patterns.begin(), r.patterns.end(),
                     [&](const config::RouteRegex& p) { return p.Matches(c.qualified); })) {
      continue;
    }
    if (first == nullptr || Rank(r.rule.kind) < Rank(first->rule.kind)) {
      first = &r;
    } else if (Rank(r.rule.kind) == Rank(first->rule.kind) &&
               (r.rule.chars != first->rule.chars || r.rule.algorithm != first->rule.algorithm ||
                r.rule.salt != first->rule.salt)) {
      return absl::FailedPreconditionError(
          Cat(r.rule.key, " and ", first->rule.key, " both select column \"", c.column, "\": Debezium uses one of "
              "them, chosen by the hash order of its configuration's keys, which the relay does not reproduce"));
    }
  }
  if (first == nullptr || (c.propagated && Rank(first->rule.kind) > kPropagationRank)) return out;
  const config::ColumnMapperRule& rule = first->rule;
  out.chosen = true;
  const auto refuse = [&](std::string_view why) {
    return absl::FailedPreconditionError(Cat(rule.key, ": column \"", c.column, "\" ", why));
  };
  const bool needs_length = rule.kind == Kind::kTruncate || c.character;
  if (needs_length && !c.length_known) return refuse("has a length the relay does not work out as Debezium does");
  switch (rule.kind) {
    case Kind::kTruncate: {
      // TruncateColumn: possible when the length is unknown or longer; its converter cuts Strings and ByteBuffers.
      if (c.length >= 0 && c.length <= rule.chars) return out;
      out.schema_parameters = Cat(R"("truncateLength":")", rule.chars, R"(")");
      out.keep = rule.chars;
      if (!c.form_known) return refuse("has a type whose value the relay does not reproduce");
      switch (ValueKindOf(c.form, c.type)) {
        case ValueKind::kColumnText: out.kind = ColumnValueMap::Kind::kTruncateText; break;
        case ValueKind::kByteBuffer: out.kind = ColumnValueMap::Kind::kTruncateBytes; break;
        case ValueKind::kOtherString:
          return refuse("is a Debezium STRING other than its PostgreSQL text (its type's, or its mode's, form), "
                        "whose truncation the relay does not reproduce");
        case ValueKind::kNotAString: break;  // left as it is
      }
      return out;
    }
    case Kind::kMask:
    case Kind::kHash:
    case Kind::kHashV2:
      out.schema_parameters = R"("masked":"true")";  // MaskStrings.alterFieldSchema, whatever the type
      if (!c.character) return out;                  // MaskStrings.create: a passthrough
      if (rule.kind == Kind::kMask) {
        out.kind = ColumnValueMap::Kind::kMask;
        out.mask.assign(static_cast<size_t>(rule.chars), '*');
        return out;
      }
      out.kind = ColumnValueMap::Kind::kHash;
      out.digest = std::string(config::OpenSslDigestName(rule.algorithm));
      if (out.digest.empty()) return refuse(Cat("is hashed with ", rule.algorithm, ", which the relay does not have"));
      out.salt = rule.salt;
      out.v2 = rule.kind == Kind::kHashV2;
      out.keep = c.length > 0 ? c.length : INT64_MAX;
      return out;
  }
  return out;
}

absl::Status ApplyColumnMap(const ColumnValueMap& map, bool* null, std::string* text, std::string* scratch) {
  switch (map.kind) {
    case ColumnValueMap::Kind::kNone: return absl::OkStatus();
    case ColumnValueMap::Kind::kMask:
      *null = false;
      text->assign(map.mask);
      return absl::OkStatus();
    case ColumnValueMap::Kind::kHash: {
      if (*null) return absl::OkStatus();
      absl::StatusOr<std::string> hex = HexDigest(map.digest, map.salt, map.v2 ? *text : JavaSerializedString(*text));
      if (!hex.ok()) return hex.status();
      if (static_cast<int64_t>(hex->size()) > map.keep) hex->resize(static_cast<size_t>(map.keep));
      *text = *std::move(hex);
      return absl::OkStatus();
    }
    case ColumnValueMap::Kind::kTruncateText:
      if (*null) return absl::OkStatus();
      TruncateJavaString(*text, map.keep, map.json, scratch);
      text->swap(*scratch);
      return absl::OkStatus();
    case ColumnValueMap::Kind::kTruncateBytes: {
      // PostgreSQL's hex text: \x and two digits a byte.
      const size_t digits = static_cast<size_t>(std::min<int64_t>(map.keep, INT64_MAX / 4)) * 2;
      if (!*null && text->starts_with("\\x") && text->size() > 2 + digits) text->resize(2 + digits);
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

void TruncateJavaString(std::string_view utf8, int64_t units, bool keep_surrogate, std::string* out) {
  out->clear();
  int64_t used = 0;
  size_t i = 0;
  while (i < utf8.size() && used < units) {
    const size_t n = std::min(SequenceLength(static_cast<unsigned char>(utf8[i])), utf8.size() - i);
    if (n == 4) {
      if (used + 2 > units) {  // a lone high surrogate, which String.getBytes(UTF_8) writes as '?'
        if (!keep_surrogate) {
          out->push_back('?');
          return;
        }
        uint32_t cp = static_cast<unsigned char>(utf8[i]) & 0x07;
        for (size_t k = 1; k < 4; ++k) cp = (cp << 6) | (static_cast<unsigned char>(utf8[i + k]) & 0x3F);
        const uint32_t high = 0xD800 + ((cp - 0x10000) >> 10);
        out->push_back(static_cast<char>(0xE0 | (high >> 12)));
        out->push_back(static_cast<char>(0x80 | ((high >> 6) & 0x3F)));
        out->push_back(static_cast<char>(0x80 | (high & 0x3F)));
        return;
      }
      used += 2;
    } else {
      used += 1;
    }
    out->append(utf8.substr(i, n));
    i += n;
  }
}

std::string JavaSerializedString(std::string_view utf8) {
  std::string modified;  // Java's modified UTF-8 (NUL as C0 80, a supplementary character as two surrogates)
  modified.reserve(utf8.size() + 8);
  for (size_t i = 0; i < utf8.size();) {
    const unsigned char lead = static_cast<unsigned char>(utf8[i]);
    const size_t n = std::min(SequenceLength(lead), utf8.size() - i);
    if (lead == 0) {
      modified.append("\xC0\x80");
    } else if (n == 4) {
      uint32_t cp = lead & 0x07;
      for (size_t k = 1; k < 4; ++k) cp = (cp << 6) | (static_cast<unsigned char>(utf8[i + k]) & 0x3F);
      cp -= 0x10000;
      for (const uint32_t unit : {0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF)}) {
        modified.push_back(static_cast<char>(0xE0 | (unit >> 12)));
        modified.push_back(static_cast<char>(0x80 | ((unit >> 6) & 0x3F)));
        modified.push_back(static_cast<char>(0x80 | (unit & 0x3F)));
      }
    } else {
      modified.append(utf8.substr(i, n));
    }
    i += n;
  }
  std::string out("\xAC\xED\x00\x05", 4);  // STREAM_MAGIC, STREAM_VERSION
  const uint64_t size = modified.size();
  if (size <= 0xFFFF) {
    out.push_back('\x74');  // TC_STRING
    out.push_back(static_cast<char>(size >> 8));
    out.push_back(static_cast<char>(size & 0xFF));
  } else {
    out.push_back('\x7C');  // TC_LONGSTRING
    for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>((size >> shift) & 0xFF));
  }
  out.append(modified);
  return out;
}

absl::StatusOr<std::string> HexDigest(std::string_view digest, std::string_view salt, std::string_view data) {
  const EVP_MD* md = EVP_get_digestbyname(std::string(digest).c_str());
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (md == nullptr || ctx == nullptr || EVP_DigestInit_ex(ctx.get(), md, nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), salt.data(), salt.size()) != 1 ||
      EVP_DigestUpdate(ctx.get(), data.data(), data.size()) != 1 || EVP_DigestFinal_ex(ctx.get(), out, &size) != 1) {
    return absl::InvalidArgumentError(Cat("the ", digest, " digest failed in OpenSSL"));
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(size * 2);
  for (unsigned int i = 0; i < size; ++i) {
    hex.push_back(kHex[out[i] >> 4]);
    hex.push_back(kHex[out[i] & 0xF]);
  }
  return hex;
}

}  // namespace outbox::outbox
