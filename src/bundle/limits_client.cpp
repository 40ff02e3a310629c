#include "bundle/limits_client.h"

#include <unistd.h>

#include <chrono>

#include "bundle/limits_protocol.h"
#include "util/text.h"

namespace devgraph::bundle {
namespace {

using SysTime = std::chrono::system_clock::time_point;

long long epoch_ms(SysTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

class LimitsClient final : public SlotGate {
 public:
  explicit LimitsClient(int fd) : fd_(fd) {}
  ~LimitsClient() override { ::close(fd_); }

  Status hello(const std::string& bundle) {
    return limits_send(fd_,
                       limits_line(Json{{"op", "hello"}, {"bundle", bundle}, {"pid", ::getpid()}}));
  }

  void ask() override { send(Json{{"op", "ask"}}); }
  void finished(double cost_usd, std::optional<long long> tokens) override {
    send(Json{{"op", "finished"},
              {"cost_usd", cost_usd},
              {"tokens", tokens ? Json(*tokens) : Json(nullptr)}});
  }
  void release() override { send(Json{{"op", "release"}}); }
  void report_limit(SysTime until, const std::string& reason) override {
    send(Json{{"op", "limit"}, {"until_ms", epoch_ms(until)}, {"reason", reason}});
  }
  int fd() const override { return fd_; }

  std::vector<GateNews> take() override {
    std::vector<GateNews> out;
    if (gone_) return out;
    std::string why;
    bool open = in_.fill(fd_, why);
    while (true) {
      auto line = in_.next();
      if (!line) {
        lost(out, line.error().message);
        return out;
      }
      if (!*line) break;
      if (auto bad = read_line(**line, out)) {
        lost(out, *bad);
        return out;
      }
    }
    if (!open) lost(out, why);
    if (!send_failure_.empty()) lost(out, send_failure_);
    return out;
  }

 private:
  void send(const Json& message) {
    if (gone_ || !send_failure_.empty()) return;
    if (auto s = limits_send(fd_, limits_line(message)); !s) send_failure_ = s.error().message;
  }

  void lost(std::vector<GateNews>& out, const std::string& why) {
    if (gone_) return;
    gone_ = true;
    out.push_back(GateNews{GateNews::Kind::closed,
                           {},
                           "the run's limits went away (" + why +
                               "): no new persona is launched; devgraph run resumes the bundle"});
  }

  // One broker line as news; the reason when it is not the protocol's.
  std::optional<std::string> read_line(const std::string& text, std::vector<GateNews>& out) {
    auto j = parse_json(text, "limits line");
    if (!j || !j->is_object()) return "a line that is not a JSON object: " + clip(text, 80);
    std::string op = json_str(*j, "op");
    if (op == "grant") {
      out.push_back(GateNews{GateNews::Kind::granted, {}, ""});
    } else if (op == "pause") {
      auto it = j->find("until_ms");
      if (it == j->end() || !it->is_number_integer()) return "a pause without until_ms";
      SysTime until{std::chrono::milliseconds(it->get<long long>())};
      out.push_back(GateNews{GateNews::Kind::paused, until, json_str(*j, "reason")});
    } else if (op == "closed") {
      out.push_back(GateNews{GateNews::Kind::closed, {}, json_str(*j, "reason", "closed")});
    } else {
      return "an unknown message '" + clip(op, 40) + "'";
    }
    return std::nullopt;
  }

  int fd_;
  LineBuffer in_;
  bool gone_ = false;
  std::string send_failure_;
};

}  // namespace

Expected<std::unique_ptr<SlotGate>> connect_limits(const std::string& address,
                                                   const std::string& bundle) {
  DG_TRY(int fd, limits_connect(address));
  auto client = std::make_unique<LimitsClient>(fd);
  if (auto h = client->hello(bundle); !h)
    return fail(ErrorKind::transient,
                "cannot say hello to the run's limits at " + address + ": " + h.error().message);
  return std::unique_ptr<SlotGate>(std::move(client));
}

}  // namespace devgraph::bundle
