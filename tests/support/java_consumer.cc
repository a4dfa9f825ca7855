#include "support/java_consumer.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "support/internal.h"
#include "support/util.h"

namespace outbox::testing {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// How DefaultMessageFormatter prints a record (print.timestamp, partition, offset, headers, key and value):
//
//   CreateTime:1700000000000 US Partition:0 US Offset:7 US id:a1 GS empty: GS gone:SUB NULL SUB US key US {"v":1} RS \n
//
// with US (0x1f) between the fields (its key.separator), GS (0x1d) between headers (headers.separator), RS and a
// newline after each record (line.separator), and SUB NULL SUB for a null key, value or header value (null.literal).
// The timestamp is "LogAppendTime:<ms>" or "NO_TIMESTAMP" too; a record without headers prints "NO_HEADERS".
constexpr char kFieldSeparator = '\x1f';
constexpr char kHeaderSeparator = '\x1d';
constexpr absl::string_view kRecordEnd = "\x1e\n";
constexpr absl::string_view kNullLiteral = "\x1a" "NULL" "\x1a";
constexpr int kFieldCount = 6;

constexpr auto kJvmExitDeadline = std::chrono::seconds(30);
constexpr milliseconds kReadPollInterval(50);
constexpr milliseconds kCollectSlice(20);  // ReadCommittedJava's wait on one consumer before it looks at the next

// `text` as a java.util.Properties value: control characters and backslashes escaped.
std::string PropertiesValue(absl::string_view text) {
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\\') {
      out += "\\\\";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += absl::StrCat("\\u00", absl::Hex(byte, absl::kZeroPad2));
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatterProperties() {
  return absl::StrCat(
      "# written by tests/support/java_consumer.cc: DefaultMessageFormatter's settings\n"
      "print.timestamp=true\nprint.partition=true\nprint.offset=true\nprint.headers=true\nprint.key=true\n"
      "print.value=true\n",
      "key.separator=", PropertiesValue(absl::string_view(&kFieldSeparator, 1)), "\n",
      "headers.separator=", PropertiesValue(absl::string_view(&kHeaderSeparator, 1)), "\n",
      "line.separator=", PropertiesValue(kRecordEnd), "\n",
      "null.literal=", PropertiesValue(kNullLiteral), "\n");
}

// The Kafka client's log at WARN to stderr: by default log4j 2 logs to stdout, which carries the records.
constexpr absl::string_view kLog4j2Properties =
    "# written by tests/support/java_consumer.cc: WARN and above to stderr, never to stdout\n"
    "status = error\n"
    "appender.err.type = Console\n"
    "appender.err.name = STDERR\n"
    "appender.err.target = SYSTEM_ERR\n"
    "appender.err.layout.type = PatternLayout\n"
    "appender.err.layout.pattern = [%d] %p %m (%c)%n\n"
    "rootLogger.level = WARN\n"
    "rootLogger.appenderRef.err.ref = STDERR\n";

absl::Status WriteFile(const std::string& path, absl::string_view content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("could not write ", path));
  return absl::OkStatus();
}

// KAFKA_LIB of scripts/versions.sh (it honours OUTBOX_RELAY_CACHE and OUTBOX_KAFKA_VERSION, as the broker does).
absl::StatusOr<std::string> KafkaJarDir() {
  auto result = RunCommand({"bash", "-c", "source \"$0/scripts/versions.sh\" && printf %s \"$KAFKA_LIB\"", SourceDir()},
                           std::chrono::seconds(30));
  if (!result.ok()) return result.status();
  if (result->exit_code != 0 || result->out.empty()) {
    return absl::InternalError(absl::StrCat("could not read KAFKA_LIB from scripts/versions.sh: ", result->err));
  }
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(result->out, ec)) {
    if (entry.path().filename().string().rfind("kafka-tools-", 0) == 0) return result->out;
  }
  return absl::FailedPreconditionError(
      absl::StrCat("no kafka-tools jar in ", result->out, ": run scripts/install-deps.sh"));
}

absl::Status BadLine(absl::string_view line, absl::string_view why) {
  return absl::DataLossError(
      absl::StrCat("could not parse the console consumer's record (", why, "): \"", absl::CHexEscape(line), "\""));
}

// "Partition:3" -> 3.
template <typename Int>
bool ParseLabelled(absl::string_view field, absl::string_view label, Int* out) {
  return absl::ConsumePrefix(&field, label) && absl::ConsumePrefix(&field, ":") && absl::SimpleAtoi(field, out);
}

std::optional<std::string> NullOr(absl::string_view text) {
  if (text == kNullLiteral) return std::nullopt;
  return std::string(text);
}

// One record as FormatterProperties() prints it, without its kRecordEnd.
absl::StatusOr<KafkaRecord> ParseRecord(absl::string_view line, const std::string& topic) {
  // The value is last: it may hold the field separator.
  std::vector<absl::string_view> fields = absl::StrSplit(line, absl::MaxSplits(kFieldSeparator, kFieldCount - 1));
  if (fields.size() != kFieldCount) return BadLine(line, absl::StrCat(fields.size(), " fields"));
  KafkaRecord r;
  r.topic = topic;
  if (fields[0] == "NO_TIMESTAMP") {
    r.timestamp_type = TimestampType::kNotAvailable;
  } else if (ParseLabelled(fields[0], "CreateTime", &r.timestamp_ms)) {
    r.timestamp_type = TimestampType::kCreateTime;
  } else if (ParseLabelled(fields[0], "LogAppendTime", &r.timestamp_ms)) {
    r.timestamp_type = TimestampType::kLogAppendTime;
  } else {
    return BadLine(line, "timestamp");
  }
  if (!ParseLabelled(fields[1], "Partition", &r.partition)) return BadLine(line, "partition");
  if (!ParseLabelled(fields[2], "Offset", &r.offset)) return BadLine(line, "offset");
  if (fields[3] != "NO_HEADERS") {
    for (absl::string_view header : absl::StrSplit(fields[3], kHeaderSeparator)) {
      // "name:value"; the name ends at the first ':'.
      const size_t colon = header.find(':');
      if (colon == absl::string_view::npos) return BadLine(line, "a header without ':'");
      r.headers.push_back(KafkaHeader{std::string(header.substr(0, colon)), NullOr(header.substr(colon + 1))});
    }
  }
  r.key = NullOr(fields[4]);
  r.value = NullOr(fields[5]);
  return r;
}

}  // namespace

absl::StatusOr<std::unique_ptr<JavaCommittedConsumer>> JavaCommittedConsumer::Start(const std::string& bootstrap,
                                                                                     const std::string& topic,
                                                                                     From from) {
  auto jars = KafkaJarDir();
  if (!jars.ok()) return jars.status();
  auto dir = MakeTempDir("outbox-java-consumer-");
  if (!dir.ok()) return dir.status();
  const std::string log4j2 = *dir + "/log4j2.properties";
  const std::string formatter = *dir + "/formatter.properties";
  const std::string fifo = *dir + "/stdout";
  absl::Status written = WriteFile(log4j2, kLog4j2Properties);
  if (written.ok()) written = WriteFile(formatter, FormatterProperties());
  if (!written.ok()) {
    RemoveTree(*dir);
    return written;
  }
  // stdout is a FIFO, so the reader thread sees each record the moment the JVM flushes it (once per record). Its
  // read end is opened first (O_NONBLOCK: without waiting for a writer), so the child's open for writing does not
  // block; the pipe reaches EOF when the JVM is gone.
  if (mkfifo(fifo.c_str(), 0600) != 0) {
    absl::Status s = absl::InternalError(absl::StrCat("mkfifo ", fifo, ": ", std::strerror(errno)));
    RemoveTree(*dir);
    return s;
  }
  const int fd = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    absl::Status s = absl::InternalError(absl::StrCat("open ", fifo, ": ", std::strerror(errno)));
    RemoveTree(*dir);
    return s;
  }
  std::unique_ptr<JavaCommittedConsumer> consumer(new JavaCommittedConsumer(topic, *dir, fd));

  const char* java = std::getenv("JAVA");  // as scripts/kafka-temp.sh
  ProcessOptions options;
  options.argv = {(java != nullptr && *java != '\0') ? java : "java",
                  // A small client: it starts in about 1.5 s on two busy cores.
                  "-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
                  // Header names are printed through System.out's charset.
                  "-Dfile.encoding=UTF-8", "-Dstdout.encoding=UTF-8", "-Dsun.stdout.encoding=UTF-8",
                  "-Dlog4j2.configurationFile=" + log4j2, "-cp", *jars + "/*",
                  "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", bootstrap, "--topic", topic,
                  "--group", UniqueName("java_consumer"), "--isolation-level", "read_committed",
                  "--formatter-config", formatter};
  if (from == From::kEarliest) options.argv.push_back("--from-beginning");
  options.output_path = fifo;
  options.stderr_path = *dir + "/stderr";
  auto child = ChildProcess::Spawn(std::move(options));
  if (!child.ok()) return child.status();  // the destructor closes the FIFO and removes the dir
  consumer->child_ = std::move(*child);
  consumer->reader_ = std::thread([c = consumer.get()] { c->ReadLoop(); });
  return consumer;
}

JavaCommittedConsumer::~JavaCommittedConsumer() {
  Stop();
  if (stdout_fd_ >= 0) close(stdout_fd_);
  RemoveTree(dir_);
}

void JavaCommittedConsumer::ReadLoop() {
  std::string buffer;
  char chunk[65536];
  absl::Status read_error;
  while (true) {
    pollfd pfd{stdout_fd_, POLLIN, 0};
    const int ready = poll(&pfd, 1, static_cast<int>(kReadPollInterval.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;  // the JVM runs and printed nothing new; Stop ends it, which ends the pipe
    const ssize_t n = read(stdout_fd_, chunk, sizeof(chunk));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) {
      read_error = absl::InternalError(absl::StrCat("reading the console consumer's stdout: ", std::strerror(errno)));
      break;
    }
    if (n == 0) break;  // EOF: the JVM is gone
    const auto read_at = std::chrono::system_clock::now();
    buffer.append(chunk, static_cast<size_t>(n));
    std::vector<TimedKafkaRecord> records;
    absl::Status parse_error;
    size_t begin = 0;
    for (size_t end; (end = buffer.find(kRecordEnd.data(), begin, kRecordEnd.size())) != std::string::npos;
         begin = end + kRecordEnd.size()) {
      auto record = ParseRecord(absl::string_view(buffer).substr(begin, end - begin), topic_);
      if (record.ok()) {
        records.push_back(TimedKafkaRecord{std::move(*record), read_at});
      } else if (parse_error.ok()) {
        parse_error = record.status();
      }
    }
    buffer.erase(0, begin);
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& r : records) pending_.push_back(std::move(r));
    if (parse_error_.ok()) parse_error_ = parse_error;
    arrived_.notify_all();
  }
  if (read_error.ok() && !buffer.empty()) read_error = BadLine(buffer, "the output ended inside a record");
  std::lock_guard<std::mutex> lock(mu_);
  if (parse_error_.ok()) parse_error_ = read_error;
  reader_done_ = true;
  arrived_.notify_all();
}

std::vector<TimedKafkaRecord> JavaCommittedConsumer::Poll(milliseconds max_wait) {
  std::unique_lock<std::mutex> lock(mu_);
  arrived_.wait_for(lock, max_wait, [&] { return !pending_.empty() || reader_done_; });
  std::vector<TimedKafkaRecord> out;
  out.swap(pending_);
  return out;
}

absl::Status JavaCommittedConsumer::status() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!parse_error_.ok()) return parse_error_;
  }
  if (stopped_ || child_ == nullptr || child_->Running()) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat("the console consumer of ", topic_, " exited with ",
                                             child_->exit_code().value_or(-1), ": ", StderrTail()));
}

void JavaCommittedConsumer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  if (child_ != nullptr) {
    (void)child_->Kill(SIGKILL);
    child_->Wait(kJvmExitDeadline);
  }
  // With the JVM reaped its end of the FIFO is closed: the reader thread drains the pipe and ends at EOF.
  if (reader_.joinable()) reader_.join();
}

std::string JavaCommittedConsumer::StderrTail(size_t max_bytes) const {
  return TailOfFile(dir_ + "/stderr", max_bytes);
}

absl::StatusOr<std::vector<KafkaRecord>> ReadCommittedJava(const std::string& bootstrap,
                                                           const std::vector<std::string>& topics,
                                                           size_t expected_at_least, milliseconds deadline,
                                                           milliseconds idle) {
  const auto start = Clock::now();
  const auto until = start + deadline;
  std::vector<std::unique_ptr<JavaCommittedConsumer>> consumers;
  for (const std::string& topic : topics) {
    auto consumer = JavaCommittedConsumer::Start(bootstrap, topic);
    if (!consumer.ok()) return consumer.status();
    consumers.push_back(std::move(*consumer));
  }
  std::vector<std::vector<KafkaRecord>> per_topic(consumers.size());
  size_t total = 0;
  auto last_arrival = start;
  const auto collect = [&](size_t i, milliseconds max_wait) {
    for (TimedKafkaRecord& r : consumers[i]->Poll(max_wait)) {
      per_topic[i].push_back(std::move(r.record));
      ++total;
      last_arrival = Clock::now();
    }
  };
  while (true) {
    for (size_t i = 0; i < consumers.size(); ++i) {
      collect(i, kCollectSlice);
      if (absl::Status s = consumers[i]->status(); !s.ok()) return s;
    }
    const auto now = Clock::now();
    if ((total >= expected_at_least && now - last_arrival >= idle) || now >= until) break;
  }
  // What the JVMs printed before they were killed counts too.
  for (size_t i = 0; i < consumers.size(); ++i) {
    consumers[i]->Stop();
    collect(i, milliseconds(0));
    if (absl::Status s = consumers[i]->status(); !s.ok()) return s;
  }
  std::vector<KafkaRecord> records;
  records.reserve(total);
  for (auto& topic_records : per_topic) {
    for (KafkaRecord& r : topic_records) records.push_back(std::move(r));
  }
  return records;
}

}  // namespace outbox::testing
