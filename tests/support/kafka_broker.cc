#include "support/kafka_broker.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <set>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "support/process.h"
#include "support/internal.h"
#include "support/util.h"

namespace outbox::testing {
namespace {

constexpr auto kScriptDeadline = std::chrono::seconds(150);

using Clock = std::chrono::steady_clock;

int RemainingMs(Clock::time_point until) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

struct AdminOptionsDeleter {
  void operator()(rd_kafka_AdminOptions_t* o) const { rd_kafka_AdminOptions_destroy(o); }
};
struct QueueDeleter {
  void operator()(rd_kafka_queue_t* q) const { rd_kafka_queue_destroy(q); }
};
struct EventDeleter {
  void operator()(rd_kafka_event_t* e) const { rd_kafka_event_destroy(e); }
};

// Waits for the admin result event on `queue`.
absl::StatusOr<std::unique_ptr<rd_kafka_event_t, EventDeleter>> PollResult(rd_kafka_queue_t* queue,
                                                                           Clock::time_point until) {
  while (true) {
    rd_kafka_event_t* ev = rd_kafka_queue_poll(queue, std::min(RemainingMs(until), 200));
    if (ev != nullptr) return std::unique_ptr<rd_kafka_event_t, EventDeleter>(ev);
    if (RemainingMs(until) == 0) return absl::DeadlineExceededError("no admin result before the deadline");
  }
}

absl::StatusOr<std::unique_ptr<rd_kafka_AdminOptions_t, AdminOptionsDeleter>> MakeAdminOptions(
    rd_kafka_t* rk, rd_kafka_admin_op_t op, Clock::time_point until) {
  std::unique_ptr<rd_kafka_AdminOptions_t, AdminOptionsDeleter> opts(rd_kafka_AdminOptions_new(rk, op));
  char errstr[512];
  int timeout = std::max(RemainingMs(until), 1);
  if (rd_kafka_AdminOptions_set_request_timeout(opts.get(), timeout, errstr, sizeof(errstr)) ||
      rd_kafka_AdminOptions_set_operation_timeout(opts.get(), timeout, errstr, sizeof(errstr))) {
    return absl::InternalError(errstr);
  }
  return opts;
}

// Whether every topic of `names` exists with `partitions` partitions (at least, when partitions > 0), each with a
// leader; with partitions == -1 whether none of them exists. One metadata request.
absl::StatusOr<bool> TopicsState(rd_kafka_t* rk, const std::vector<std::string>& names, int partitions,
                                 Clock::time_point until) {
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 1, nullptr, &md, std::clamp(RemainingMs(until), 1, 5000));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return absl::UnavailableError(rd_kafka_err2str(err));
  std::set<std::string_view> wanted(names.begin(), names.end());
  size_t found = 0;
  size_t ready = 0;
  for (int i = 0; i < md->topic_cnt; ++i) {
    const rd_kafka_metadata_topic_t& t = md->topics[i];
    if (!wanted.count(t.topic) || t.err != RD_KAFKA_RESP_ERR_NO_ERROR) continue;
    ++found;
    bool served = t.partition_cnt >= partitions;
    for (int p = 0; p < t.partition_cnt; ++p) {
      if (t.partitions[p].leader < 0 || t.partitions[p].err != RD_KAFKA_RESP_ERR_NO_ERROR) served = false;
    }
    if (served) ++ready;
  }
  rd_kafka_metadata_destroy(md);
  return partitions < 0 ? found == 0 : ready == wanted.size();
}

}  // namespace

void RdKafkaDeleter::operator()(rd_kafka_t* rk) const {
  if (rk == nullptr) return;
  if (rd_kafka_type(rk) == RD_KAFKA_CONSUMER) rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
}

absl::StatusOr<RdKafkaPtr> NewKafkaClient(rd_kafka_type_t type, const std::map<std::string, std::string>& conf) {
  rd_kafka_conf_t* c = rd_kafka_conf_new();
  char errstr[512];
  for (const auto& [k, v] : conf) {
    if (rd_kafka_conf_set(c, k.c_str(), v.c_str(), errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(c);
      return absl::InvalidArgumentError(absl::StrCat(k, "=", v, ": ", errstr));
    }
  }
  rd_kafka_t* rk = rd_kafka_new(type, c, errstr, sizeof(errstr));
  if (rk == nullptr) {
    rd_kafka_conf_destroy(c);
    return absl::InternalError(absl::StrCat("rd_kafka_new: ", errstr));
  }
  return RdKafkaPtr(rk);
}

absl::Status KafkaBroker::RunScript(const std::vector<std::string>& args, std::string* out) {
  std::vector<std::string> argv = {SourceDir() + "/scripts/kafka-temp.sh"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::map<std::string, std::string> env = {{"KAFKA_TEMP_OWNER_PID", std::to_string(getpid())}};
  if (!options_.extra_properties.empty()) env["KAFKA_TEMP_PROPERTIES"] = options_.extra_properties;
  if (options_.sasl) env["KAFKA_TEMP_SASL"] = "1";
  if (options_.tls) env["KAFKA_TEMP_TLS"] = "1";
  auto result = RunCommand(argv, kScriptDeadline, env);
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    return absl::InternalError(absl::StrCat("kafka-temp.sh ", absl::StrJoin(args, " "), " exited with ",
                                            result->exit_code, ": ", result->err, "\n", result->out));
  }
  if (out != nullptr) *out = result->out;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<KafkaBroker>> KafkaBroker::Create(Options options) {
  auto dir = MakeTempDir("outbox-kafka-");
  if (!dir.ok()) return dir.status();
  std::unique_ptr<KafkaBroker> broker(new KafkaBroker(*dir, std::move(options)));
  if (absl::Status s = broker->Start(); !s.ok()) return s;
  return broker;
}

KafkaBroker* KafkaBroker::Shared() {
  static std::mutex mu;
  static std::unique_ptr<KafkaBroker> shared;
  static absl::Status failure;
  std::lock_guard<std::mutex> lock(mu);
  if (shared == nullptr && failure.ok()) {
    const char* external = std::getenv("OUTBOX_TEST_KAFKA_BOOTSTRAP");
    if (external != nullptr && *external != '\0') {
      shared.reset(new KafkaBroker("", Options{}));
      shared->bootstrap_ = external;
      absl::string_view port_text = external;
      if (size_t colon = port_text.rfind(':'); colon != std::string_view::npos) {
        (void)absl::SimpleAtoi(port_text.substr(colon + 1), &shared->port_);
      }
      shared->running_ = true;
    } else {
      auto broker = Create();
      if (broker.ok()) {
        shared = std::move(*broker);
      } else {
        failure = broker.status();
      }
    }
  }
  if (shared == nullptr) {
    ADD_FAILURE() << "the shared Kafka broker did not start: " << failure;
    return nullptr;
  }
  return shared.get();
}

KafkaBroker::~KafkaBroker() {
  if (external()) return;
  // A test that failed with its own broker shows the end of the broker's log (the directory goes next): whether the
  // broker served, or what it said, after a restart the relay did not see.
  if (::testing::UnitTest::GetInstance()->current_test_info() != nullptr && ::testing::Test::HasFailure()) {
    for (const std::string& file : {log_path(), dir_ + "/kafka.out"}) {
      fprintf(stderr, "KafkaBroker %s: the test failed; the end of %s:\n%s\n", bootstrap_.c_str(), file.c_str(),
              TailOfFile(file, 6000).c_str());
    }
  }
  absl::Status s = RunScript({"kill", dir_}, nullptr);
  if (!s.ok()) fprintf(stderr, "KafkaBroker: %s\n", std::string(s.message()).c_str());
  RemoveTree(dir_);
}

absl::Status KafkaBroker::Start() {
  if (external()) return absl::FailedPreconditionError("an external broker (OUTBOX_TEST_KAFKA_BOOTSTRAP)");
  std::vector<std::string> args = {"start", dir_};
  if (port_ == 0 && options_.port != 0) args.push_back(std::to_string(options_.port));
  std::string out;
  if (absl::Status s = RunScript(args, &out); !s.ok()) return s;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (absl::ConsumePrefix(&line, "KAFKA_SASL_BOOTSTRAP=")) {
      sasl_bootstrap_ = std::string(absl::StripAsciiWhitespace(line));
    } else if (absl::ConsumePrefix(&line, "KAFKA_TLS_BOOTSTRAP=")) {
      tls_bootstrap_ = std::string(absl::StripAsciiWhitespace(line));
    } else if (absl::ConsumePrefix(&line, "TLS_DIR=")) {
      tls_dir_ = std::string(absl::StripAsciiWhitespace(line));
    } else if (absl::ConsumePrefix(&line, "KAFKA_BOOTSTRAP=")) {
      bootstrap_ = std::string(absl::StripAsciiWhitespace(line));
      if (size_t colon = bootstrap_.rfind(':'); colon != std::string::npos) {
        (void)absl::SimpleAtoi(absl::string_view(bootstrap_).substr(colon + 1), &port_);
      }
    }
  }
  if (port_ == 0) return absl::InternalError(absl::StrCat("kafka-temp.sh start printed no KAFKA_BOOTSTRAP: ", out));
  running_ = true;
  return absl::OkStatus();
}

absl::Status KafkaBroker::Stop() {
  if (external()) return absl::FailedPreconditionError("an external broker (OUTBOX_TEST_KAFKA_BOOTSTRAP)");
  if (absl::Status s = RunScript({"stop", dir_}, nullptr); !s.ok()) return s;
  running_ = false;
  return absl::OkStatus();
}

absl::Status KafkaBroker::Kill() {
  if (external()) return absl::FailedPreconditionError("an external broker (OUTBOX_TEST_KAFKA_BOOTSTRAP)");
  if (absl::Status s = RunScript({"kill", dir_}, nullptr); !s.ok()) return s;
  running_ = false;
  return absl::OkStatus();
}

absl::Status KafkaBroker::Restart() {
  if (absl::Status s = Stop(); !s.ok()) return s;
  return Start();
}

absl::Status KafkaBroker::CreateTopic(std::string_view name, int partitions,
                                      const std::map<std::string, std::string>& configs,
                                      std::chrono::milliseconds deadline) {
  return CreateTopics({std::string(name)}, partitions, configs, deadline);
}

absl::Status KafkaBroker::CreateTopics(const std::vector<std::string>& names, int partitions,
                                       const std::map<std::string, std::string>& configs,
                                       std::chrono::milliseconds deadline) {
  const auto until = Clock::now() + deadline;
  const std::string what = names.size() == 1 ? names[0] : absl::StrCat(names.size(), " topics");
  auto rk = NewKafkaClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap_}});
  if (!rk.ok()) return rk.status();
  char errstr[512];
  std::vector<rd_kafka_NewTopic_t*> topics;
  const auto destroy = [&] {
    for (rd_kafka_NewTopic_t* t : topics) rd_kafka_NewTopic_destroy(t);
  };
  for (const std::string& name : names) {
    rd_kafka_NewTopic_t* topic = rd_kafka_NewTopic_new(name.c_str(), partitions, 1, errstr, sizeof(errstr));
    if (topic == nullptr) {
      destroy();
      return absl::InvalidArgumentError(errstr);
    }
    topics.push_back(topic);
    for (const auto& [k, v] : configs) {
      if (rd_kafka_resp_err_t err = rd_kafka_NewTopic_set_config(topic, k.c_str(), v.c_str()); err) {
        destroy();
        return absl::InvalidArgumentError(absl::StrCat(k, "=", v, ": ", rd_kafka_err2str(err)));
      }
    }
  }
  auto opts = MakeAdminOptions(rk->get(), RD_KAFKA_ADMIN_OP_CREATETOPICS, until);
  if (!opts.ok()) {
    destroy();
    return opts.status();
  }
  std::unique_ptr<rd_kafka_queue_t, QueueDeleter> queue(rd_kafka_queue_new(rk->get()));
  rd_kafka_CreateTopics(rk->get(), topics.data(), topics.size(), opts->get(), queue.get());
  destroy();
  auto ev = PollResult(queue.get(), until);
  if (!ev.ok()) return ev.status();
  if (rd_kafka_event_error(ev->get())) {
    return absl::UnavailableError(absl::StrCat("CreateTopics ", what, ": ", rd_kafka_event_error_string(ev->get())));
  }
  const rd_kafka_CreateTopics_result_t* res = rd_kafka_event_CreateTopics_result(ev->get());
  size_t count = 0;
  const rd_kafka_topic_result_t** results = rd_kafka_CreateTopics_result_topics(res, &count);
  for (size_t i = 0; i < count; ++i) {
    rd_kafka_resp_err_t err = rd_kafka_topic_result_error(results[i]);
    const char* name = rd_kafka_topic_result_name(results[i]);
    if (err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
      return absl::AlreadyExistsError(absl::StrCat("topic ", name, " exists"));
    }
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      const char* msg = rd_kafka_topic_result_error_string(results[i]);
      return absl::InternalError(absl::StrCat("CreateTopics ", name, ": ", rd_kafka_err2name(err), ": ",
                                              msg != nullptr ? msg : ""));
    }
  }
  // The controller has them; wait until the broker serves every partition.
  absl::Status last = absl::DeadlineExceededError("no metadata");
  while (true) {
    auto ready = TopicsState(rk->get(), names, partitions, until);
    if (ready.ok() && *ready) return absl::OkStatus();
    if (!ready.ok()) last = ready.status();
    if (RemainingMs(until) == 0) {
      return absl::DeadlineExceededError(
          absl::StrCat(what, " created but not every partition has a leader yet: ", last.message()));
    }
    usleep(20 * 1000);
  }
}

absl::Status KafkaBroker::UpsertScramUser(const std::string& user, const std::string& password,
                                         std::chrono::milliseconds deadline) {
  const auto until = Clock::now() + deadline;
  auto rk = NewKafkaClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap_}});
  if (!rk.ok()) return rk.status();
  rd_kafka_UserScramCredentialAlteration_t* upsert = rd_kafka_UserScramCredentialUpsertion_new(
      user.c_str(), RD_KAFKA_SCRAM_MECHANISM_SHA_256, 4096, reinterpret_cast<const unsigned char*>(password.data()),
      password.size(), nullptr, 0);
  // This operation takes a request timeout only (MakeAdminOptions sets an operation timeout too).
  std::unique_ptr<rd_kafka_AdminOptions_t, AdminOptionsDeleter> opts(
      rd_kafka_AdminOptions_new(rk->get(), RD_KAFKA_ADMIN_OP_ALTERUSERSCRAMCREDENTIALS));
  char errstr[512];
  if (rd_kafka_AdminOptions_set_request_timeout(opts.get(), std::max(RemainingMs(until), 1), errstr, sizeof(errstr))) {
    rd_kafka_UserScramCredentialAlteration_destroy(upsert);
    return absl::InternalError(errstr);
  }
  std::unique_ptr<rd_kafka_queue_t, QueueDeleter> queue(rd_kafka_queue_new(rk->get()));
  rd_kafka_AlterUserScramCredentials(rk->get(), &upsert, 1, opts.get(), queue.get());
  rd_kafka_UserScramCredentialAlteration_destroy(upsert);
  auto ev = PollResult(queue.get(), until);
  if (!ev.ok()) return ev.status();
  if (rd_kafka_event_error(ev->get())) {
    return absl::UnavailableError(absl::StrCat("AlterUserScramCredentials ", user, ": ",
                                               rd_kafka_event_error_string(ev->get())));
  }
  size_t count = 0;
  const rd_kafka_AlterUserScramCredentials_result_response_t** responses =
      rd_kafka_AlterUserScramCredentials_result_responses(rd_kafka_event_AlterUserScramCredentials_result(ev->get()),
                                                          &count);
  for (size_t i = 0; i < count; ++i) {
    if (const rd_kafka_error_t* error = rd_kafka_AlterUserScramCredentials_result_response_error(responses[i])) {
      if (rd_kafka_error_code(error) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return absl::InternalError(absl::StrCat("AlterUserScramCredentials ", user, ": ", rd_kafka_error_string(error)));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status KafkaBroker::DeleteTopic(std::string_view name, std::chrono::milliseconds deadline) {
  const auto until = Clock::now() + deadline;
  auto rk = NewKafkaClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap_}});
  if (!rk.ok()) return rk.status();
  rd_kafka_DeleteTopic_t* topic = rd_kafka_DeleteTopic_new(std::string(name).c_str());
  auto opts = MakeAdminOptions(rk->get(), RD_KAFKA_ADMIN_OP_DELETETOPICS, until);
  if (!opts.ok()) {
    rd_kafka_DeleteTopic_destroy(topic);
    return opts.status();
  }
  std::unique_ptr<rd_kafka_queue_t, QueueDeleter> queue(rd_kafka_queue_new(rk->get()));
  rd_kafka_DeleteTopics(rk->get(), &topic, 1, opts->get(), queue.get());
  rd_kafka_DeleteTopic_destroy(topic);
  auto ev = PollResult(queue.get(), until);
  if (!ev.ok()) return ev.status();
  if (rd_kafka_event_error(ev->get())) {
    return absl::UnavailableError(absl::StrCat("DeleteTopics ", internal::Av(name), ": ", rd_kafka_event_error_string(ev->get())));
  }
  const rd_kafka_DeleteTopics_result_t* res = rd_kafka_event_DeleteTopics_result(ev->get());
  size_t count = 0;
  const rd_kafka_topic_result_t** results = rd_kafka_DeleteTopics_result_topics(res, &count);
  for (size_t i = 0; i < count; ++i) {
    rd_kafka_resp_err_t err = rd_kafka_topic_result_error(results[i]);
    if (err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
      return absl::NotFoundError(absl::StrCat("topic ", internal::Av(name), " does not exist"));
    }
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return absl::InternalError(absl::StrCat("DeleteTopics ", internal::Av(name), ": ", rd_kafka_err2name(err)));
    }
  }
  while (true) {
    auto gone = TopicsState(rk->get(), {std::string(name)}, -1, until);
    if (gone.ok() && *gone) return absl::OkStatus();
    if (RemainingMs(until) == 0) return absl::DeadlineExceededError(absl::StrCat("topic ", internal::Av(name), " still listed"));
    usleep(20 * 1000);
  }
}

}  // namespace outbox::testing
