// YAML text to the config's flat key tree. The only file that touches yaml-cpp: its exceptions stop here.
#include <exception>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "config/config_internal.h"
#include "yaml-cpp/yaml.h"

namespace outbox::config::internal {
namespace {

// What aliases can build is bounded: an alias inside its own anchor's map makes a cycle (`a: &a {b: *a}`, which
// yaml-cpp accepts), and aliases of aliases multiply the keys they expand to.
constexpr int kMaxDepth = 32;
constexpr size_t kMaxKeys = 1000;  // a real config has tens

std::string ChildPath(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : absl::StrCat(parent, ".", key);
}

absl::Status Insert(const std::string& path, RawValue value, RawTree* tree) {
  if (tree->size() >= kMaxKeys) {
    return absl::InvalidArgumentError(absl::StrCat("config: more than ", kMaxKeys, " keys (aliases of aliases?)"));
  }
  if (!tree->emplace(path, std::move(value)).second) {
    // Also catches a kafka property given both flat (`bootstrap.servers:`) and nested (`bootstrap: {servers:}`).
    return absl::InvalidArgumentError(absl::StrCat("duplicate key \"", path, "\""));
  }
  return absl::OkStatus();
}

// Adds every leaf under `node` to `tree`, keyed by its dotted path below `path`.
absl::Status Flatten(const YAML::Node& node, const std::string& path, int depth, RawTree* tree) {
  if (depth > kMaxDepth) {
    return absl::InvalidArgumentError(absl::StrCat(path.substr(0, path.find('.')), ": nested more than ", kMaxDepth,
                                                   " levels deep (an alias inside its own anchor?)"));
  }
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      if (node.size() == 0 && !path.empty()) return Insert(path, RawValue{}, tree);  // `source: {}`: absent
      for (const auto& entry : node) {
        if (!entry.first.IsScalar() || entry.first.Scalar().empty()) {
          return absl::InvalidArgumentError(
              absl::StrCat(path.empty() ? "config" : path, ": keys must be non-empty strings"));
        }
        absl::Status status = Flatten(entry.second, ChildPath(path, entry.first.Scalar()), depth + 1, tree);
        if (!status.ok()) return status;
      }
      return absl::OkStatus();
    }
    case YAML::NodeType::Sequence: {
      RawValue value;
      value.kind = RawValue::Kind::kList;
      for (const auto& item : node) {
        if (!item.IsScalar()) {
          return absl::InvalidArgumentError(absl::StrCat(path, ": list entries must be single values"));
        }
        value.list.push_back(item.Scalar());
      }
      return Insert(path, std::move(value), tree);
    }
    case YAML::NodeType::Scalar: {
      RawValue value;
      value.kind = RawValue::Kind::kScalar;
      value.scalar = node.Scalar();
      value.plain = node.Tag() == "?";  // yaml-cpp tags plain scalars "?", quoted ones "!"
      return Insert(path, std::move(value), tree);
    }
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return Insert(path, RawValue{}, tree);
  }
  return absl::InternalError(absl::StrCat(path, ": unexpected YAML node type"));
}

}  // namespace

absl::StatusOr<RawTree> ParseYamlTree(const std::string& yaml_text) {
  try {
    YAML::Node root = YAML::Load(yaml_text);
    RawTree tree;
    if (root.IsNull()) return tree;
    if (!root.IsMap()) {
      return absl::InvalidArgumentError("config: the top level must be a map of sections (source:, outbox:, kafka:)");
    }
    absl::Status status = Flatten(root, "", 0, &tree);
    if (!status.ok()) return status;
    return tree;
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) return absl::InvalidArgumentError(absl::StrCat("invalid YAML: ", e.msg));
    // e.msg is yaml-cpp's description alone ("illegal map value"): it never quotes the text, which may hold secrets.
    return absl::InvalidArgumentError(absl::StrCat("invalid YAML at line ", e.mark.line + 1, ", column ",
                                                   e.mark.column + 1, ": ", e.msg));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("invalid YAML: ", e.what()));
  }
}

}  // namespace outbox::config::internal
