#include "orchestrator/sources.h"

namespace devgraph::orchestrator {
namespace {

class LocalSource final : public IssueSource {
 public:
  explicit LocalSource(issues::LocalIssues& store) : store_(store) {}
  std::string kind() const override { return "local"; }

  Expected<std::vector<issues::Issue>> open_issues() override {
    DG_TRY(auto all, store_.list());
    std::vector<issues::Issue> out;
    for (auto& i : all)
      if (i.state == "open") out.push_back(std::move(i));
    return out;
  }

  Expected<std::set<long long>> closed_by_open_prs() override { return std::set<long long>{}; }

  Expected<std::vector<issues::Issue>> delivered_issues() override {
    DG_TRY(auto all, store_.list());
    std::vector<issues::Issue> out;
    for (auto& i : all)
      if (i.branch && i.head) out.push_back(std::move(i));
    return out;
  }

  Status record_delivery(long long number, const std::string& branch,
                         const std::string& head) override {
    DG_TRY(auto i, store_.record_delivery(number, branch, head));
    (void)i;
    return {};
  }

  Status close(long long number, const std::string& reason) override {
    DG_TRY(auto i, store_.close(number, reason));
    (void)i;
    return {};
  }

 private:
  issues::LocalIssues& store_;
};

class GithubSource final : public IssueSource {
 public:
  GithubSource(gh::Gh& gh, std::optional<std::string> label) : gh_(gh), label_(std::move(label)) {}
  std::string kind() const override { return "github"; }

  Expected<std::vector<issues::Issue>> open_issues() override {
    return gh_.list_open_issues(label_);
  }

  Expected<std::set<long long>> closed_by_open_prs() override {
    DG_TRY(auto prs, gh_.list_open_prs());
    std::set<long long> out;
    for (const auto& pr : prs) out.insert(pr.closes.begin(), pr.closes.end());
    return out;
  }

  Expected<std::vector<issues::Issue>> delivered_issues() override {
    return std::vector<issues::Issue>{};
  }
  Status record_delivery(long long, const std::string&, const std::string&) override { return {}; }
  Status close(long long, const std::string&) override { return {}; }

 private:
  gh::Gh& gh_;
  std::optional<std::string> label_;
};

}  // namespace

std::unique_ptr<IssueSource> local_source(issues::LocalIssues& store) {
  return std::make_unique<LocalSource>(store);
}

std::unique_ptr<IssueSource> github_source(gh::Gh& gh, std::optional<std::string> label) {
  return std::make_unique<GithubSource>(gh, std::move(label));
}

}  // namespace devgraph::orchestrator
