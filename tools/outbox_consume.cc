// outbox-consume: prints records of one or more topics from the beginning (topic, partition, offset, key,
// headers, value), one line each, until --count records or --timeout-ms. A value whose content-type header names
// outbox.v1.Envelope (outbox.format: protobuf) is printed decoded. Used by the quickstart and benchmarks.
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "outbox/v1/envelope.pb.h"

namespace {

constexpr const char* kEnvelopeContentType = "application/x-protobuf; messageType=outbox.v1.Envelope";

// The value as printed: its bytes, or a decoded envelope in protobuf's one-line text form.
std::string Value(const rd_kafka_message_t* m, bool envelope) {
  if (m->payload == nullptr) return "(null)";
  const std::string bytes(static_cast<const char*>(m->payload), m->len);
  outbox::v1::Envelope e;
  if (envelope && e.ParseFromString(bytes)) return "outbox.v1.Envelope{" + e.ShortDebugString() + "}";
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"outbox-consume: print the records of topics from the beginning"};
  std::string bootstrap;
  std::vector<std::string> topics;
  long count = -1;
  int timeout_ms = 30000;
  app.add_option("--bootstrap", bootstrap)->required();
  app.add_option("--topic", topics)->required();
  app.add_option("--count", count, "stop after this many records");
  app.add_option("--timeout-ms", timeout_ms, "stop after this long");
  CLI11_PARSE(app, argc, argv);

  char errstr[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), errstr, sizeof errstr) != RD_KAFKA_CONF_OK ||
      rd_kafka_conf_set(conf, "group.id", "outbox-consume", errstr, sizeof errstr) != RD_KAFKA_CONF_OK ||
      rd_kafka_conf_set(conf, "enable.auto.commit", "false", errstr, sizeof errstr) != RD_KAFKA_CONF_OK ||
      rd_kafka_conf_set(conf, "topic.metadata.refresh.interval.ms", "500", errstr, sizeof errstr) != RD_KAFKA_CONF_OK) {
    std::fprintf(stderr, "outbox-consume: %s\n", errstr);
    return 2;
  }
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof errstr);
  if (rk == nullptr) {
    std::fprintf(stderr, "outbox-consume: %s\n", errstr);
    return 2;
  }
  // Assign partition 0.. of each topic from the beginning once the topic exists (no group rebalancing).
  rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(8);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (const std::string& t : topics) {
    int partitions = 0;
    while (partitions == 0 && std::chrono::steady_clock::now() < deadline) {
      rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, t.c_str(), nullptr);
      const rd_kafka_metadata_t* md = nullptr;
      if (rd_kafka_metadata(rk, 0, rkt, &md, 2000) == RD_KAFKA_RESP_ERR_NO_ERROR && md->topic_cnt == 1 &&
          md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        partitions = md->topics[0].partition_cnt;
      }
      if (md) rd_kafka_metadata_destroy(md);
      rd_kafka_topic_destroy(rkt);
      if (partitions == 0) rd_kafka_poll(rk, 200);
    }
    for (int p = 0; p < partitions; ++p) {
      rd_kafka_topic_partition_list_add(parts, t.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    }
  }
  rd_kafka_assign(rk, parts);
  rd_kafka_topic_partition_list_destroy(parts);
  long seen = 0;
  while ((count < 0 || seen < count) && std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 200);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++seen;
      std::string line = std::string(rd_kafka_topic_name(m->rkt)) + " [" + std::to_string(m->partition) + "@" +
                         std::to_string(m->offset) + "] key=" +
                         (m->key ? std::string(static_cast<const char*>(m->key), m->key_len) : "(null)");
      rd_kafka_headers_t* hdrs = nullptr;
      bool envelope = false;
      if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        const char* name;
        const void* val;
        size_t size;
        for (size_t i = 0; rd_kafka_header_get_all(hdrs, i, &name, &val, &size) == RD_KAFKA_RESP_ERR_NO_ERROR; ++i) {
          const std::string value = val ? std::string(static_cast<const char*>(val), size) : "(null)";
          envelope = envelope || (std::string(name) == "content-type" && value == kEnvelopeContentType);
          line += std::string(" ") + name + "=" + value;
        }
      }
      line += " value=" + Value(m, envelope);
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return count < 0 || seen >= count ? 0 : 1;
}
