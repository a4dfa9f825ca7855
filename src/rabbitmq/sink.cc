// RabbitMqSink: publisher-confirmed publishes from an I/O thread of the sink's own, completions to the loop.
#include "rabbitmq/sink.h"

#include <amqp.h>
#include <amqp_ssl_socket.h>
#include <amqp_tcp_socket.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include "absl/time/clock.h"
#include "common/strings.h"
#include "sinks/handoff.h"
#include "spdlog/spdlog.h"

namespace outbox::rabbitmq {
namespace {

constexpr amqp_channel_t kPublishChannel = 1;
constexpr amqp_channel_t kProbeChannel = 2;
constexpr int kPublishBatch = 256;   // publishes between two reads of the socket (confirms never pile up unread)
constexpr int kIdleWaitMs = 200;     // the I/O thread's longest wait (heartbeats are serviced at least this often)
constexpr int kMaxBackoffMs = 2000;
constexpr int kFrameMax = 131072;
constexpr absl::Duration kRecheckMissing = absl::Seconds(5);

std::shared_ptr<spdlog::logger> Log() {
  auto l = spdlog::get("rabbitmq");
  return l ? l : spdlog::default_logger();
}

std::string_view View(amqp_bytes_t b) { return {static_cast<const char*>(b.bytes), b.len}; }
amqp_bytes_t Bytes(std::string_view s) { return {s.size(), const_cast<char*>(s.data())}; }

timeval Timeval(int64_t ms) {
  timeval tv;
  tv.tv_sec = ms / 1000;
  tv.tv_usec = static_cast<suseconds_t>((ms % 1000) * 1000);
  return tv;
}

// The URL's parts, with the user and password of the options when given.
struct Endpoint {
  std::string host, vhost, user, password;
  int port = 5672;
  bool tls = false;
};

absl::StatusOr<Endpoint> ParseUrl(const Options& o) {
  std::string url = o.url;
  amqp_connection_info info;
  amqp_default_connection_info(&info);
  if (amqp_parse_url(url.data(), &info) != AMQP_STATUS_OK) {
    return absl::InvalidArgumentError("rabbitmq.url: not an amqp:// or amqps:// URL");
  }
  Endpoint e;
  e.host = info.host;
  e.port = info.port;
  e.vhost = info.vhost;
  if (e.vhost.empty()) e.vhost = "/";  // amqp://host/ as pika and most clients read it
  e.tls = info.ssl != 0;
  e.user = o.user.empty() ? info.user : o.user;
  e.password = o.password.empty() ? info.password : o.password;
  return e;
}

// Whether the broker asked this thread's current TLS handshake for a client certificate that the relay has none of
// (OpenSSL's client certificate callback, set only without rabbitmq.tls.cert). With TLS 1.3 the broker's refusal
// then comes after the handshake, and its alert can be lost to the TCP reset that follows it: a bare SSL error at
// the login with this flag set is that refusal.
thread_local bool certificate_requested = false;

int NoteCertificateRequest(SSL*, X509**, EVP_PKEY**) {
  certificate_requested = true;
  return 0;  // no certificate: the handshake goes on without one
}

// A failed connect or login named by its TLS cause: the key to fix, and PermissionDenied (fatal) for a certificate
// or a protocol the two sides refuse, which no retry cures. The SSL failures the client does not type further are
// decided on this thread's last OpenSSL error code (ClassifyTlsError); every other status is returned as it is.
absl::Status NameTlsFailure(const absl::Status& status, int amqp_status, const Options& o, const std::string& host) {
  TlsFailure failure = TlsFailure::kTransient;
  std::string cause;
  switch (amqp_status) {
    case AMQP_STATUS_SSL_PEER_VERIFY_FAILED:
    case AMQP_STATUS_SSL_HOSTNAME_VERIFY_FAILED:
      failure = TlsFailure::kServerCertificate;
      break;
    case AMQP_STATUS_SSL_ERROR:
    case AMQP_STATUS_SSL_CONNECTION_FAILED: {
      const unsigned long e = ERR_peek_last_error();
      if (e == 0 && certificate_requested && o.tls_cert.empty()) {
        failure = TlsFailure::kClientCertificate;
        cause = " (certificate required: the broker asked for a client certificate, then closed the connection)";
        break;
      }
      failure = ClassifyTlsError(ERR_GET_LIB(e), ERR_GET_REASON(e));
      if (const char* reason = ERR_reason_error_string(e); reason != nullptr) cause = Cat(" (", reason, ")");
      break;
    }
    default:
      return status;
  }
  switch (failure) {
    case TlsFailure::kTransient:
      return status;
    case TlsFailure::kServerCertificate:
      return absl::PermissionDeniedError(
          Cat(status.message(), cause, ": the broker's certificate must be signed by the CA in rabbitmq.tls.ca (",
              o.tls_ca.empty() ? "unset: the system's CAs" : o.tls_ca, ") and name ", host));
    case TlsFailure::kClientCertificate:
      return absl::PermissionDeniedError(
          Cat(status.message(), cause, ": the broker refused the client certificate of rabbitmq.tls.cert and ",
              "rabbitmq.tls.key (", o.tls_cert.empty() ? "unset" : o.tls_cert, ")"));
    case TlsFailure::kProtocol:
      return absl::PermissionDeniedError(
          Cat(status.message(), cause, ": rabbitmq.url must name the broker's amqps (TLS) port"));
  }
  return status;
}

}  // namespace

// One AMQP connection with its publishing channel (confirms on) and its probe channel (passive exchange checks,
// which the broker answers with a channel close when the exchange is missing). Used by one thread at a time.
class RabbitMqSink::Connection {
 public:
  Connection() : conn_(amqp_new_connection()) {}
  ~Connection() {
    if (conn_ != nullptr) amqp_destroy_connection(conn_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Opens the socket, logs in, opens both channels and turns confirms on. Unavailable: retry later;
  // PermissionDenied or InvalidArgument: fatal (credentials, vhost, TLS, URL).
  absl::Status Open(const Options& o) {
    auto endpoint = ParseUrl(o);
    if (!endpoint.ok()) return endpoint.status();
    const Endpoint& e = *endpoint;
    where_ = Cat(e.host, ":", e.port, e.vhost == "/" ? "" : Cat(" vhost ", e.vhost));
    amqp_socket_t* sock = e.tls ? amqp_ssl_socket_new(conn_) : amqp_tcp_socket_new(conn_);
    if (sock == nullptr) return absl::InternalError("rabbitmq: could not create the socket");
    if (e.tls) {
      if (!o.tls_ca.empty() && amqp_ssl_socket_set_cacert(sock, o.tls_ca.c_str()) != AMQP_STATUS_OK) {
        return absl::InvalidArgumentError(Cat("rabbitmq.tls.ca: could not load ", o.tls_ca));
      }
      if (!o.tls_cert.empty() &&
          amqp_ssl_socket_set_key(sock, o.tls_cert.c_str(), o.tls_key.c_str()) != AMQP_STATUS_OK) {
        return absl::InvalidArgumentError(Cat("rabbitmq.tls.cert: could not load ", o.tls_cert, " and its key"));
      }
      amqp_ssl_socket_set_verify_peer(sock, o.tls_verify ? 1 : 0);
      amqp_ssl_socket_set_verify_hostname(sock, o.tls_verify ? 1 : 0);
      if (o.tls_cert.empty()) {
        SSL_CTX_set_client_cert_cb(static_cast<SSL_CTX*>(amqp_ssl_socket_get_context(sock)), NoteCertificateRequest);
      }
    }
    certificate_requested = false;
    timeval tv = Timeval(o.connect_timeout_ms);
    ERR_clear_error();  // the OpenSSL error NameTlsFailure reads is this attempt's
    if (int st = amqp_socket_open_noblock(sock, e.host.c_str(), e.port, &tv); st != AMQP_STATUS_OK) {
      return NameTlsFailure(FromClient(st, Cat("could not connect to ", where_)), st, o, e.host);
    }
    amqp_set_handshake_timeout(conn_, &tv);
    amqp_set_rpc_timeout(conn_, &tv);
    // connection.blocked: the broker tells us before it stops reading; authentication_failure_close: a refused
    // login is a connection.close with 403, not a dropped socket.
    amqp_table_entry_t caps[3];
    caps[0].key = amqp_cstring_bytes("connection.blocked");
    caps[1].key = amqp_cstring_bytes("authentication_failure_close");
    caps[2].key = amqp_cstring_bytes("publisher_confirms");
    for (amqp_table_entry_t& c : caps) {
      c.value.kind = AMQP_FIELD_KIND_BOOLEAN;
      c.value.value.boolean = 1;
    }
    amqp_table_entry_t props[2];
    props[0].key = amqp_cstring_bytes("capabilities");
    props[0].value.kind = AMQP_FIELD_KIND_TABLE;
    props[0].value.value.table = {3, caps};
    props[1].key = amqp_cstring_bytes("connection_name");
    props[1].value.kind = AMQP_FIELD_KIND_UTF8;
    props[1].value.value.bytes = Bytes(o.name);
    amqp_table_t client_properties = {2, props};
    amqp_rpc_reply_t r = amqp_login_with_properties(conn_, e.vhost.c_str(), 0, kFrameMax, o.heartbeat_s,
                                                    &client_properties, AMQP_SASL_METHOD_PLAIN, e.user.c_str(),
                                                    e.password.c_str());
    if (absl::Status st = FromReply(r, Cat("login to ", where_, " as ", e.user)); !st.ok()) {
      // A client certificate the broker refuses shows here with TLS 1.3: at the first read after the handshake.
      return r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION ? NameTlsFailure(st, r.library_error, o, e.host) : st;
    }
    for (amqp_channel_t ch : {kPublishChannel, kProbeChannel}) {
      amqp_channel_open(conn_, ch);
      if (absl::Status st = FromReply(amqp_get_rpc_reply(conn_), "opening a channel"); !st.ok()) return st;
    }
    amqp_confirm_select(conn_, kPublishChannel);
    if (absl::Status st = FromReply(amqp_get_rpc_reply(conn_), "confirm.select"); !st.ok()) return st;
    open_ = true;
    return absl::OkStatus();
  }

  // OK when the exchange exists; NotFound naming it when not; Unavailable or PermissionDenied for the connection.
  absl::Status CheckExchange(const std::string& name) {
    if (name.empty()) return absl::OkStatus();  // the default exchange always exists
    amqp_exchange_declare(conn_, kProbeChannel, amqp_cstring_bytes(name.c_str()), amqp_cstring_bytes("direct"),
                          /*passive=*/1, 0, 0, 0, amqp_empty_table);
    amqp_rpc_reply_t r = amqp_get_rpc_reply(conn_);
    if (r.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION && r.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
      const auto* close = static_cast<amqp_channel_close_t*>(r.reply.decoded);
      const int code = close->reply_code;
      const std::string text(View(close->reply_text));
      amqp_channel_close_ok_t ok;
      amqp_send_method(conn_, kProbeChannel, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok);
      amqp_channel_open(conn_, kProbeChannel);
      if (absl::Status st = FromReply(amqp_get_rpc_reply(conn_), "reopening the probe channel"); !st.ok()) {
        return st;
      }
      if (code == AMQP_NOT_FOUND) {
        return absl::NotFoundError(Cat("exchange \"", name, "\" does not exist on the broker (", where_,
                                       "; create it, with a binding for every routing key, and for the dead letters)"));
      }
      return absl::PermissionDeniedError(Cat("checking exchange \"", name, "\": ", code, " ", text));
    }
    return FromReply(r, Cat("checking exchange \"", name, "\""));
  }

  // basic.publish, mandatory and persistent; the client's status.
  int Publish(const Options& o, const Pending& p) {
    const OwnedRecord& rec = *p.record;
    std::vector<amqp_table_entry_t> headers;
    headers.reserve(rec.headers.size() + 1);
    const auto add = [&](std::string_view name, const std::optional<std::string>& value) {
      amqp_table_entry_t h;
      h.key = Bytes(name);
      if (value) {
        h.value.kind = AMQP_FIELD_KIND_UTF8;
        h.value.value.bytes = Bytes(*value);
      } else {
        h.value.kind = AMQP_FIELD_KIND_VOID;
      }
      headers.push_back(h);
    };
    if (rec.key) add(kKeyHeader, rec.key);
    for (const auto& [name, value] : rec.headers) add(name, value);
    amqp_basic_properties_t props;
    std::memset(&props, 0, sizeof props);
    props._flags = AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_TIMESTAMP_FLAG |
                   AMQP_BASIC_HEADERS_FLAG;
    props.content_type = Bytes(o.content_type);
    props.delivery_mode = AMQP_DELIVERY_PERSISTENT;
    const int64_t ms = rec.timestamp_ms > 0 ? rec.timestamp_ms : absl::ToUnixMillis(absl::Now());
    props.timestamp = static_cast<uint64_t>(ms / 1000);
    props.headers = {static_cast<int>(headers.size()), headers.data()};
    if (!rec.event_id.empty()) {
      props._flags |= AMQP_BASIC_MESSAGE_ID_FLAG;
      props.message_id = Bytes(rec.event_id);
    }
    const std::string_view body = rec.value ? std::string_view(*rec.value) : std::string_view();
    return amqp_basic_publish(conn_, kPublishChannel, Bytes(p.exchange), Bytes(p.routing_key), /*mandatory=*/1,
                              /*immediate=*/0, &props, Bytes(body));
  }

  // A frame without waiting: AMQP_STATUS_OK (one read), AMQP_STATUS_TIMEOUT (none), else the connection is gone.
  int Read(amqp_frame_t* frame, int64_t wait_ms) {
    timeval tv = Timeval(wait_ms);
    return amqp_simple_wait_frame_noblock(conn_, frame, &tv);
  }
  bool Buffered() const { return amqp_frames_enqueued(conn_) || amqp_data_in_buffer(conn_); }
  void Release() { amqp_maybe_release_buffers(conn_); }
  void SendCloseOk(amqp_channel_t channel) {
    if (channel == 0) {
      amqp_connection_close_ok_t ok;
      amqp_send_method(conn_, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok);
    } else {
      amqp_channel_close_ok_t ok;
      amqp_send_method(conn_, channel, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok);
    }
  }
  int fd() const { return amqp_get_sockfd(conn_); }
  bool open() const { return open_; }
  const std::string& where() const { return where_; }

  // A client status as a Status: Unavailable when a retry may cure it, PermissionDenied when not.
  static absl::Status FromClient(int st, std::string_view what) {
    const std::string text = Cat("rabbitmq: ", what, ": ", amqp_error_string2(st));
    return ClassifyClientStatus(st) == sinks::Outcome::kFatal ? absl::PermissionDeniedError(text)
                                                              : absl::UnavailableError(text);
  }

 private:
  absl::Status FromReply(const amqp_rpc_reply_t& r, std::string_view what) {
    switch (r.reply_type) {
      case AMQP_RESPONSE_NORMAL:
        return absl::OkStatus();
      case AMQP_RESPONSE_NONE:
        return absl::UnavailableError(Cat("rabbitmq: ", what, ": no reply"));
      case AMQP_RESPONSE_LIBRARY_EXCEPTION:
        return FromClient(r.library_error, what);
      case AMQP_RESPONSE_SERVER_EXCEPTION:
        break;
    }
    int code = 0;
    std::string text;
    CloseAction action = CloseAction::kFatal;
    if (r.reply.id == AMQP_CONNECTION_CLOSE_METHOD) {
      const auto* c = static_cast<amqp_connection_close_t*>(r.reply.decoded);
      code = c->reply_code;
      text = std::string(View(c->reply_text));
      action = ClassifyConnectionClose(code);
      SendCloseOk(0);
    } else if (r.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
      const auto* c = static_cast<amqp_channel_close_t*>(r.reply.decoded);
      code = c->reply_code;
      text = std::string(View(c->reply_text));
      action = ClassifyChannelClose(code);
    }
    const std::string why = Cat("rabbitmq: ", what, ": the broker answered ", code, " ", text);
    return action == CloseAction::kFatal ? absl::PermissionDeniedError(why) : absl::UnavailableError(why);
  }

  amqp_connection_state_t conn_;
  bool open_ = false;
  std::string where_;
};

absl::Status ProbeExchanges(const Options& options, const std::vector<std::string>& exchanges) {
  RabbitMqSink::Connection c;
  if (absl::Status st = c.Open(options); !st.ok()) return st;
  for (const std::string& name : exchanges) {
    if (absl::Status st = c.CheckExchange(name); !st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<RabbitMqSink>> RabbitMqSink::Create(const Options& options,
                                                                   sinks::ReportHandler* handler) {
  std::unique_ptr<RabbitMqSink> sink(new RabbitMqSink());
  sink->options_ = options;
  sink->handler_ = handler;
  sink->wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  sink->io_wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (sink->wake_fd_ < 0 || sink->io_wake_fd_ < 0) return absl::InternalError("rabbitmq: could not create an eventfd");
  // A first attempt here, so that refused credentials, a refused vhost or TLS fail the start by name; only a
  // broker that does not answer yet is retried in the background.
  auto first = std::make_unique<Connection>();
  absl::Status st = first->Open(options);
  if (!st.ok() && st.code() != absl::StatusCode::kUnavailable) return st;
  if (st.ok()) {
    sink->connected_ = true;
    sink->sock_fd_ = first->fd();
    Log()->info("rabbitmq: connected to {}", first->where());
  } else {
    Log()->warn("{}; retrying in the background", Msg(st));
    absl::MutexLock lock(&sink->mu_);
    sink->reason_ = Msg(st);
    first.reset();
  }
  RabbitMqSink* self = sink.get();
  sink->io_ = std::thread([self, c = std::move(first)]() mutable { self->IoMain(std::move(c)); });
  return sink;
}

RabbitMqSink::~RabbitMqSink() {
  handler_ = nullptr;
  stop_ = true;
  WakeIo();
  // A write the broker does not read (a blocked connection) holds the I/O thread: shut its socket down.
  for (int i = 0; i < 100 && !io_exited_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (!io_exited_ && sock_fd_ >= 0) shutdown(sock_fd_, SHUT_RDWR);
  if (io_.joinable()) io_.join();
  if (wake_fd_ >= 0) close(wake_fd_);
  if (io_wake_fd_ >= 0) close(io_wake_fd_);
}

void RabbitMqSink::Wake() { sinks::SignalEventFd(wake_fd_); }

void RabbitMqSink::WakeIo() { sinks::SignalEventFd(io_wake_fd_); }

void RabbitMqSink::DrainWakeup() { sinks::DrainEventFd(wake_fd_); }

void RabbitMqSink::Complete(std::vector<Settled> settled) {
  if (settled.empty()) return;
  {
    absl::MutexLock lock(&mu_);
    for (Settled& s : settled) done_.push_back(Completion{std::move(s)});
  }
  Wake();
}

// The I/O thread: connects (again), checks exchanges, publishes, reads confirms, returns and the broker's notices.
void RabbitMqSink::IoMain(std::unique_ptr<Connection> c) {
  ConfirmTracker tracker;
  uint64_t next_tag = 1;
  int backoff_ms = 250;
  int not_found_closes = 0;  // 404 channel closes since the last ack: an exchange check that keeps passing
  // A return in progress: its method came, its header (message id) and body frames follow.
  struct PendingReturn {
    int code = 0;
    std::string text, exchange, routing_key, message_id;
    uint64_t body_left = 0;
    bool header_seen = false;
  };
  std::optional<PendingReturn> ret;

  const auto lost = [&](const absl::Status& why) {
    const bool fatal = why.code() == absl::StatusCode::kPermissionDenied;
    if (fatal) {
      Log()->error("{}", Msg(why));
    } else if (connected_) {
      Log()->warn("{}; reconnecting", Msg(why));
    }
    std::vector<Settled> failed = tracker.FailAll(Msg(why));
    {
      absl::MutexLock lock(&mu_);
      for (const Pending& p : to_send_) {
        Settled s;
        s.seq = p.seq;
        s.outcome = sinks::Outcome::kRetriable;
        s.error = Msg(why);
        s.error_name = "CONNECTION";
        failed.push_back(std::move(s));
      }
      to_send_.clear();
      for (auto& [name, e] : exchanges_) {
        if (e.state == ExchangeState::kChecking) to_check_.push_back(name);
      }
      if (fatal && fatal_.ok()) fatal_ = why;
      reason_ = Msg(why);
    }
    connected_ = false;
    blocked_ = false;
    sock_fd_ = -1;
    c.reset();
    ret.reset();
    Complete(std::move(failed));
  };
  const auto wait_io = [&](int fd, int ms) {
    pollfd fds[2] = {{io_wake_fd_, POLLIN, 0}, {fd, POLLIN, 0}};
    poll(fds, fd >= 0 ? 2 : 1, ms);
    uint64_t value;
    [[maybe_unused]] ssize_t n = read(io_wake_fd_, &value, sizeof value);
  };

  while (!stop_) {
    if (!c) {
      bool fatal = false;
      {
        absl::MutexLock lock(&mu_);
        fatal = !fatal_.ok();
      }
      if (fatal) {  // the relay recreates the sink, or stops
        wait_io(-1, kIdleWaitMs);
        continue;
      }
      auto fresh = std::make_unique<Connection>();
      absl::Status st = fresh->Open(options_);
      if (!st.ok()) {
        {
          absl::MutexLock lock(&mu_);
          reason_ = Msg(st);
          if (st.code() != absl::StatusCode::kUnavailable && fatal_.ok()) fatal_ = st;
        }
        Wake();
        wait_io(-1, backoff_ms);
        backoff_ms = std::min(backoff_ms * 2, kMaxBackoffMs);
        continue;
      }
      backoff_ms = 250;
      c = std::move(fresh);
      next_tag = 1;
      tracker = ConfirmTracker();
      sock_fd_ = c->fd();
      {
        absl::MutexLock lock(&mu_);
        reason_.clear();
      }
      connected_ = true;
      Log()->info("rabbitmq: connected to {}", c->where());
      Wake();
    }

    // Exchanges the loop asked about.
    std::vector<std::string> check;
    {
      absl::MutexLock lock(&mu_);
      check.swap(to_check_);
    }
    bool gone = false;
    for (size_t i = 0; i < check.size() && !gone; ++i) {
      absl::Status st = c->CheckExchange(check[i]);
      if (st.ok() || st.code() == absl::StatusCode::kNotFound) {
        absl::MutexLock lock(&mu_);
        Exchange& e = exchanges_[check[i]];
        e.state = st.ok() ? ExchangeState::kExists : ExchangeState::kMissing;
        e.error = st.ok() ? "" : std::string(st.message());
        e.checked = absl::Now();
        if (!st.ok()) Log()->warn("rabbitmq: {}", st.message());
        continue;
      }
      {
        absl::MutexLock lock(&mu_);
        for (size_t j = i; j < check.size(); ++j) to_check_.push_back(check[j]);
      }
      lost(st);
      gone = true;
    }
    if (gone) continue;
    if (!check.empty()) Wake();

    // Publishes, unless the broker blocked the connection.
    int published = 0;
    if (!blocked_) {
      std::vector<Pending> batch;
      {
        absl::MutexLock lock(&mu_);
        if (purge_) {
          purge_ = false;
          (void)tracker.FailAll("purged");  // already reported by Purge; confirms still coming are dropped
        }
        while (!to_send_.empty() && batch.size() < static_cast<size_t>(kPublishBatch)) {
          batch.push_back(std::move(to_send_.front()));
          to_send_.pop_front();
        }
      }
      for (size_t i = 0; i < batch.size(); ++i) {
        const Pending& p = batch[i];
        tracker.Published(next_tag++, p.seq, p.exchange, p.routing_key, p.record->event_id);
        const int st = c->Publish(options_, p);
        if (st != AMQP_STATUS_OK) {
          {
            absl::MutexLock lock(&mu_);
            for (size_t j = batch.size(); j > i + 1; --j) to_send_.push_front(std::move(batch[j - 1]));
          }
          lost(Connection::FromClient(st, "publish"));
          gone = true;
          break;
        }
        ++published;
      }
    }
    if (gone) continue;

    // Everything the broker sent.
    int frames = 0;
    while (c) {
      amqp_frame_t frame;
      const int st = c->Read(&frame, 0);
      if (st == AMQP_STATUS_TIMEOUT) break;
      if (st != AMQP_STATUS_OK) {
        lost(Connection::FromClient(st, "reading from the broker"));
        break;
      }
      ++frames;
      if (frame.frame_type == AMQP_FRAME_METHOD) {
        const amqp_method_number_t id = frame.payload.method.id;
        void* m = frame.payload.method.decoded;
        if (id == AMQP_BASIC_ACK_METHOD || id == AMQP_BASIC_NACK_METHOD) {
          const bool ack = id == AMQP_BASIC_ACK_METHOD;
          const uint64_t tag = ack ? static_cast<amqp_basic_ack_t*>(m)->delivery_tag
                                   : static_cast<amqp_basic_nack_t*>(m)->delivery_tag;
          const bool multiple = ack ? static_cast<amqp_basic_ack_t*>(m)->multiple
                                    : static_cast<amqp_basic_nack_t*>(m)->multiple;
          if (ack) not_found_closes = 0;
          Complete(tracker.Confirmed(tag, multiple, ack));
        } else if (id == AMQP_BASIC_RETURN_METHOD) {
          const auto* r = static_cast<amqp_basic_return_t*>(m);
          ret = PendingReturn{r->reply_code, std::string(View(r->reply_text)), std::string(View(r->exchange)),
                              std::string(View(r->routing_key)), "", 0, false};
        } else if (id == AMQP_CONNECTION_BLOCKED_METHOD) {
          const std::string why(View(static_cast<amqp_connection_blocked_t*>(m)->reason));
          Log()->warn("rabbitmq: the broker blocked the connection ({}); publishing waits", why);
          {
            absl::MutexLock lock(&mu_);
            reason_ = Cat("the broker blocked the connection: ", why);
          }
          blocked_ = true;
          Wake();
        } else if (id == AMQP_CONNECTION_UNBLOCKED_METHOD) {
          Log()->info("rabbitmq: the broker unblocked the connection");
          {
            absl::MutexLock lock(&mu_);
            reason_.clear();
          }
          blocked_ = false;
          Wake();
        } else if (id == AMQP_CHANNEL_CLOSE_METHOD || id == AMQP_CONNECTION_CLOSE_METHOD) {
          const bool channel = id == AMQP_CHANNEL_CLOSE_METHOD;
          const int code = channel ? static_cast<amqp_channel_close_t*>(m)->reply_code
                                   : static_cast<amqp_connection_close_t*>(m)->reply_code;
          const std::string text(channel ? View(static_cast<amqp_channel_close_t*>(m)->reply_text)
                                         : View(static_cast<amqp_connection_close_t*>(m)->reply_text));
          c->SendCloseOk(channel ? frame.channel : 0);
          CloseAction action = channel ? ClassifyChannelClose(code) : ClassifyConnectionClose(code);
          const std::string why = Cat("rabbitmq: the broker closed the ", channel ? "channel" : "connection",
                                      " (", code, " ", text, ")");
          if (action == CloseAction::kRecheckExchanges) {
            // An exchange went away: every exchange is checked again before its next publish.
            absl::MutexLock lock(&mu_);
            exchanges_.clear();
            if (++not_found_closes > 3) action = CloseAction::kFatal;
          }
          lost(action == CloseAction::kFatal ? absl::PermissionDeniedError(why) : absl::UnavailableError(why));
          break;
        }
      } else if (frame.frame_type == AMQP_FRAME_HEADER && ret && !ret->header_seen) {
        const auto* p = static_cast<amqp_basic_properties_t*>(frame.payload.properties.decoded);
        if (p != nullptr && (p->_flags & AMQP_BASIC_MESSAGE_ID_FLAG)) ret->message_id = std::string(View(p->message_id));
        ret->body_left = frame.payload.properties.body_size;
        ret->header_seen = true;
      } else if (frame.frame_type == AMQP_FRAME_BODY && ret && ret->header_seen) {
        const uint64_t n = frame.payload.body_fragment.len;
        ret->body_left = n >= ret->body_left ? 0 : ret->body_left - n;
      }
      if (ret && ret->header_seen && ret->body_left == 0) {
        tracker.Returned(ret->code, std::move(ret->text), std::move(ret->exchange), std::move(ret->routing_key),
                         std::move(ret->message_id));
        ret.reset();
      }
      if (frames % 64 == 0) c->Release();
    }
    if (!c) continue;
    c->Release();
    if (published == 0 && frames == 0 && !c->Buffered()) {
      bool more = false;
      {
        absl::MutexLock lock(&mu_);
        more = (!to_send_.empty() && !blocked_) || !to_check_.empty() || purge_;
      }
      if (!more) wait_io(c->fd(), kIdleWaitMs);
    }
  }
  c.reset();
  io_exited_ = true;
}

sinks::ProduceResult RabbitMqSink::Produce(const Record& record, uint64_t origin) {
  using sinks::ProduceResult;
  using sinks::Reason;
  {
    absl::MutexLock lock(&mu_);
    if (!fatal_.ok()) return ProduceResult::Failed(Msg(fatal_));
  }
  const bool dead_letter = record.topic == options_.dead_letter_topic;
  const std::string& exchange_template =
      dead_letter && !options_.dead_letter_exchange.empty() ? options_.dead_letter_exchange : options_.exchange;
  std::string exchange = ExpandTemplate(exchange_template, record.topic, record.route_value);
  // A dead letter goes with delivery.dead_letter_topic as its routing key (the routing key template would route it
  // where its original was refused).
  std::string routing_key = dead_letter ? std::string(record.topic)
                                        : ExpandTemplate(options_.routing_key, record.topic, record.route_value);
  if (absl::Status st = CheckDestination(exchange, routing_key); !st.ok()) {
    return ProduceResult::Rejected(Reason::kTopic, Msg(st));
  }
  if (absl::Status st = CheckHeaders(record); !st.ok()) return ProduceResult::Rejected(Reason::kNone, Msg(st));
  const size_t body = record.value ? record.value->size() : 0;
  if (body > options_.max_message_bytes) {
    return ProduceResult::Rejected(Reason::kTooLarge, Cat("message of ", body, " bytes is larger than the broker's "
                                                          "max_message_size (", options_.max_message_bytes, ")"));
  }
  if (!connected_ || blocked_) return ProduceResult::Full();
  if (!exchange.empty()) {
    bool asked = false;
    {
      absl::MutexLock lock(&mu_);
      auto it = exchanges_.find(exchange);
      if (it == exchanges_.end()) {
        exchanges_[exchange] = Exchange{};
        to_check_.push_back(exchange);
        asked = true;
      } else if (it->second.state == ExchangeState::kChecking) {
        return ProduceResult::Full();
      } else if (it->second.state == ExchangeState::kMissing) {
        if (absl::Now() - it->second.checked < kRecheckMissing) {
          return ProduceResult::Rejected(Reason::kTopic, it->second.error);
        }
        it->second.state = ExchangeState::kChecking;  // created since? ask again
        to_check_.push_back(exchange);
        asked = true;
      }
    }
    if (asked) {  // the I/O thread checks it; the core retries from its loop
      WakeIo();
      return ProduceResult::Full();
    }
  }
  std::string key_token;
  if (!keys_.TryAcquire(record.topic, record.key, &key_token)) return ProduceResult::Full();  // its key is in flight
  auto owned = std::make_shared<const OwnedRecord>(OwnedRecord::Of(record));
  const uint64_t seq = next_seq_++;
  inflight_.emplace(seq, InFlight{origin, std::string(record.topic), record.PayloadBytes(), std::move(key_token), owned});
  {
    absl::MutexLock lock(&mu_);
    to_send_.push_back(Pending{seq, std::move(exchange), std::move(routing_key), std::move(owned)});
  }
  WakeIo();
  return ProduceResult::Ok();
}

void RabbitMqSink::Serve(Completion& c) {
  auto it = inflight_.find(c.settled.seq);
  if (it == inflight_.end()) return;  // purged, its report already served
  InFlight f = std::move(it->second);
  inflight_.erase(it);
  keys_.Release(f.key_token);
  if (handler_ == nullptr) return;
  sinks::Report r;
  r.origin = f.origin;
  r.outcome = c.settled.outcome;
  r.reason = c.settled.reason;
  r.topic = f.topic;
  r.bytes = f.bytes;
  if (r.outcome != sinks::Outcome::kAcked) {
    r.error = c.settled.error;
    r.error_name = c.settled.error_name;
    r.event_id = f.record->event_id;
    r.source_lsn = f.record->HeaderText("source_lsn");
    r.rejected = f.record.get();
  }
  handler_->OnReport(r);
}

int RabbitMqSink::Poll(int timeout_ms) {
  std::deque<Completion> batch = sinks::TakeCompletions(mu_, done_, timeout_ms);
  for (Completion& c : batch) Serve(c);
  return static_cast<int>(batch.size());
}

void RabbitMqSink::Purge() {
  {
    absl::MutexLock lock(&mu_);
    to_send_.clear();
    purge_ = true;
    for (const auto& [seq, f] : inflight_) {
      Settled s;
      s.seq = seq;
      s.outcome = sinks::Outcome::kRetriable;
      s.error = "purged";
      s.error_name = "PURGED";
      done_.push_back(Completion{std::move(s)});
    }
  }
  WakeIo();
  Wake();
}

absl::Status RabbitMqSink::FatalError() const {
  absl::MutexLock lock(&mu_);
  return fatal_;
}

std::string RabbitMqSink::unreachable_reason() const {
  absl::MutexLock lock(&mu_);
  return reason_;
}

absl::Status RabbitMqSink::CheckReachable(int timeout_ms) {
  const absl::Time until = absl::Now() + absl::Milliseconds(timeout_ms);
  while (!connected_ && absl::Now() < until) {
    if (absl::Status st = FatalError(); !st.ok()) return st;
    absl::SleepFor(absl::Milliseconds(10));
  }
  if (connected_) return absl::OkStatus();
  const std::string why = unreachable_reason();
  return absl::UnavailableError(why.empty() ? "rabbitmq: not connected to the broker" : why);
}

}  // namespace outbox::rabbitmq
