// Reads topics back with Kafka's own console consumer (org.apache.kafka.tools.consumer.ConsoleConsumer on the JVM,
// from the broker's jars: KAFKA_LIB of scripts/versions.sh) at isolation level read_committed: a reader that
// shares no code with librdkafka, for the exactly-once tests.
//
// The consumer prints each record through its DefaultMessageFormatter with control-character separators (see
// java_consumer.cc), which this file parses back into a KafkaRecord. That formatter prints no topic name, so each
// topic gets a JVM of its own. What it cannot carry: keys, header names or header values holding the bytes
// 0x1a, 0x1d, 0x1e or 0x1f, header names holding ':', and values holding "\x1e\n" (JSON text never does); such a
// record reads back as a parse error or as other fields.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "support/kafka_reader.h"
#include "support/process.h"

namespace outbox::testing {

// A record the console consumer printed, with the moment this process read its line.
struct TimedKafkaRecord {
  KafkaRecord record;  // topic, partition, offset, key, value, headers, timestamp (all of KafkaRecord's fields)
  std::chrono::system_clock::time_point read_at;  // when the reader thread read the record's line from the JVM
};

// One console consumer JVM on one topic, in a consumer group of its own, reading committed records only.
//
// Owned and called by one thread, the test's: Start spawns the JVM from it, and the JVM is killed when that thread
// exits. A reader thread of the object's own reads the JVM's stdout and stamps each record's line with the time it
// was read, so Poll may be called at any pace without skewing read_at. stderr (the Kafka client's WARN log and
// the consumer's own notes) goes to a file (StderrTail).
//
// The JVM starts and joins its group in about 2 s. Nothing on stdout tells when it is fetching: a test that needs
// to know (latency, or From::kLatest, which skips records produced before the group assigned the partitions)
// produces a marker record and polls until it arrives.
class JavaCommittedConsumer {
 public:
  enum class From {
    kEarliest,  // the topic's first record (auto.offset.reset=earliest; the group is new)
    kLatest,    // records produced after the group assigned the partitions
  };

  // Starts the JVM. FailedPrecondition when the Kafka jars are missing (scripts/install-deps.sh).
  static absl::StatusOr<std::unique_ptr<JavaCommittedConsumer>> Start(const std::string& bootstrap,
                                                                      const std::string& topic,
                                                                      From from = From::kEarliest);
  // Stop(), then removes the temp dir.
  ~JavaCommittedConsumer();
  JavaCommittedConsumer(const JavaCommittedConsumer&) = delete;
  JavaCommittedConsumer& operator=(const JavaCommittedConsumer&) = delete;

  // The records read since the last call, in the order the consumer printed them (each partition's in offset
  // order). Waits up to `max_wait` for the first when there is none yet; returns at once after the JVM is gone.
  std::vector<TimedKafkaRecord> Poll(std::chrono::milliseconds max_wait);

  // OK while the JVM runs (or Stop ended it) and every line parsed. Otherwise Unavailable naming the exit code with
  // the tail of stderr when the JVM exited by itself, or DataLoss with the first line that did not parse (the
  // records before it are still returned by Poll).
  absl::Status status();

  // SIGKILLs the JVM (its output is flushed per record, and its group is of no further use), then reads what it
  // had printed: Poll still returns that. Idempotent.
  void Stop();

  const std::string& topic() const { return topic_; }
  // The last `max_bytes` of the JVM's stderr.
  std::string StderrTail(size_t max_bytes = 4000) const;

 private:
  JavaCommittedConsumer(std::string topic, std::string dir, int stdout_fd)
      : topic_(std::move(topic)), dir_(std::move(dir)), stdout_fd_(stdout_fd) {}
  // The reader thread: reads stdout until EOF (the JVM exited) and parses each complete record.
  void ReadLoop();

  const std::string topic_;
  const std::string dir_;  // the temp dir: log4j2.properties, formatter.properties, the stdout FIFO, stderr
  int stdout_fd_;          // the read end of the stdout FIFO; the reader thread's until it is joined
  std::unique_ptr<ChildProcess> child_;
  bool stopped_ = false;
  std::thread reader_;

  std::mutex mu_;
  std::condition_variable arrived_;
  std::vector<TimedKafkaRecord> pending_ ABSL_GUARDED_BY(mu_);  // read, not yet returned by Poll
  absl::Status parse_error_ ABSL_GUARDED_BY(mu_);               // the first line that did not parse
  bool reader_done_ ABSL_GUARDED_BY(mu_) = false;               // stdout reached EOF
};

// Reads `topics` from the beginning, each with a JavaCommittedConsumer (the JVMs run side by side), until at
// least `expected_at_least` records (all topics together) were read and then none arrived for `idle`, or until
// `deadline` passes. Either way it returns what was read: a short read is the caller's to assert on. Records are
// grouped by topic in the order of `topics`, each topic's in the order its consumer printed them.
//
// `idle` counts from the call as well as from each record, and a JVM takes about 2 s to start and join its group:
// with expected_at_least == 0 (asserting that nothing is there) pass an `idle` well above that. An error when a
// consumer could not start, exited by itself, or printed a line that did not parse.
absl::StatusOr<std::vector<KafkaRecord>> ReadCommittedJava(const std::string& bootstrap,
                                                           const std::vector<std::string>& topics,
                                                           size_t expected_at_least, std::chrono::milliseconds deadline,
                                                           std::chrono::milliseconds idle = std::chrono::seconds(3));

}  // namespace outbox::testing
