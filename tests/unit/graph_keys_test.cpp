// Every key of the shipped GRAPH.yaml is in the registry (graph/keys.h),
// each read key changes the model when its value changes, and each fixed
// key is refused when it does: no edit of the file is accepted and
// ignored.
#include "graph/keys.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <set>

#include "graph/graph.h"
#include "graph/yaml_doc.h"
#include "support/test_util.h"
#include "util/fs.h"

namespace devgraph {
namespace {

Json shipped_doc() {
  const std::string path = test::source_dir() + "/skill/GRAPH.yaml";
  auto doc = parse_yaml_document(test::slurp(path), path);
  EXPECT_TRUE(doc) << doc.error().message;
  return doc ? std::move(*doc) : Json();
}

// The model a document gives (JSON is YAML's flow style, so the parser
// takes the dump), or nullopt when it does not load.
std::optional<Graph> model_of(const Json& doc) {
  auto g = Graph::parse(doc.dump(), "edited GRAPH.yaml");
  if (!g) return std::nullopt;
  return std::move(*g);
}

// Another value of the same kind.
Json changed(const Json& v) {
  if (v.is_string()) return v.get<std::string>() + "-edited";
  if (v.is_boolean()) return !v.get<bool>();
  if (v.is_number_integer()) return v.get<long long>() + 1;
  if (v.is_number()) return v.get<double>() * 2 + 1;
  if (v.is_null()) return 7;
  if (v.is_array()) {
    Json out = v;
    out.push_back("edited-item");
    return out;
  }
  return Json{{"edited", 1}};
}

Json* slot(Json& doc, const std::vector<std::string>& path) {
  Json* cur = &doc;
  for (const auto& name : path) {
    if (name.front() == '[')
      cur = &(*cur)[std::stoul(name.substr(1, name.size() - 2))];
    else
      cur = &(*cur)[name];
  }
  return cur;
}

Json with_changed(Json doc, const std::vector<std::string>& path) {
  Json* at = slot(doc, path);
  *at = changed(*at);
  return doc;
}

// The read keys (by `use_of`) of `doc` whose changed value leaves the model
// as it was: keys that lost their reader.
std::vector<std::string> read_keys_nothing_reads(
    const Json& doc, const std::function<KeyUse(const std::vector<std::string>&)>& use_of) {
  std::vector<std::string> out;
  auto original = model_of(doc);
  EXPECT_TRUE(original);
  if (!original) return out;
  for (const auto& leaf : graph_leaves(doc)) {
    if (use_of(leaf.path) != KeyUse::read) continue;
    auto edited = model_of(with_changed(doc, leaf.path));
    if (edited && *edited == *original) out.push_back(dotted(leaf.path));
  }
  return out;
}

KeyUse registry_use(const std::vector<std::string>& path) {
  const GraphKey* row = graph_key_for(path);
  return row ? row->use : KeyUse::fixed;
}

TEST(GraphKeys, TheShippedGraphAsJsonGivesTheSameModel) {
  auto g = Graph::load(test::source_dir() + "/skill");
  ASSERT_TRUE(g) << g.error().message;
  auto again = model_of(shipped_doc());
  ASSERT_TRUE(again);
  EXPECT_TRUE(*again == *g);
}

TEST(GraphKeys, EveryKeyOfTheShippedGraphHasARow) {
  Json doc = shipped_doc();
  EXPECT_EQ(check_graph_keys(doc, doc), std::vector<std::string>{});
  for (const auto& leaf : graph_leaves(doc))
    EXPECT_NE(graph_key_for(leaf.path), nullptr) << dotted(leaf.path);
  EXPECT_EQ(check_skill_graph_keys(test::source_dir() + "/skill"), std::vector<std::string>{});
}

TEST(GraphKeys, EveryRowIsAKeyOfTheShippedGraphOrOneItMayAdd) {
  Json doc = shipped_doc();
  std::set<std::string_view> used;
  for (const auto& leaf : graph_leaves(doc)) used.insert(graph_key_for(leaf.path)->path);
  // Read when present, absent from the shipped file.
  const std::set<std::string_view> optional = {"headless.model"};
  for (const auto& row : graph_keys())
    EXPECT_TRUE(used.count(row.path) || optional.count(row.path)) << row.path << " matches no key";
  Json with_model = doc;
  with_model["headless"]["model"] = "some-model";
  auto g = model_of(with_model);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->headless.model, "some-model");
}

TEST(GraphKeys, EveryReadKeyChangesTheModelWhenItsValueChanges) {
  Json doc = shipped_doc();
  size_t read = 0;
  for (const auto& leaf : graph_leaves(doc)) read += registry_use(leaf.path) == KeyUse::read;
  EXPECT_GT(read, 150u);
  EXPECT_EQ(read_keys_nothing_reads(doc, registry_use), std::vector<std::string>{});
}

// The check above fails when code stops reading a key: a key nothing reads
// (placement.worktree, the engine's own layout) claimed as read is named.
TEST(GraphKeys, AKeyClaimedAsReadThatNothingReadsIsNamed) {
  Json doc = shipped_doc();
  auto claims = [](const std::vector<std::string>& path) {
    return dotted(path) == "placement.worktree" ? KeyUse::read : registry_use(path);
  };
  EXPECT_EQ(read_keys_nothing_reads(doc, claims),
            std::vector<std::string>{"placement.worktree"});
}

TEST(GraphKeys, EveryFixedKeyIsRefusedWithAnotherValueAndNothingReadsIt) {
  Json doc = shipped_doc();
  auto original = model_of(doc);
  ASSERT_TRUE(original);
  size_t fixed = 0;
  for (const auto& leaf : graph_leaves(doc)) {
    if (registry_use(leaf.path) != KeyUse::fixed) continue;
    ++fixed;
    Json edited = with_changed(doc, leaf.path);
    auto errors = check_graph_keys(edited, doc);
    ASSERT_EQ(errors.size(), 1u) << dotted(leaf.path);
    EXPECT_EQ(errors[0].rfind(dotted(leaf.path) + ": describes what devgraph always does (", 0),
              0u)
        << errors[0];
    auto model = model_of(edited);
    EXPECT_TRUE(model && *model == *original) << dotted(leaf.path) << " is read after all";
  }
  EXPECT_GT(fixed, 50u);
}

TEST(GraphKeys, AKeyNoRowListsIsRefusedNamingIt) {
  Json doc = shipped_doc();
  Json edited = doc;
  edited["delivery"]["github"]["merge_when"] = "always";
  edited["nodes"]["verify"]["guards"]["max_cycle"] = 3;
  edited["nodes"]["task_scheduler"]["routes"]["later"] = "verify";  // routes are names: read
  EXPECT_EQ(check_graph_keys(edited, doc),
            (std::vector<std::string>{
                "delivery.github.merge_when: no code reads this key (a misspelt name, or a "
                "setting this engine lacks)",
                "nodes.verify.guards.max_cycle: no code reads this key (a misspelt name, or a "
                "setting this engine lacks)"}));
}

TEST(GraphKeys, ANewNodeMayHoldReadKeysButNoDescriptionOfTheEngine) {
  Json doc = shipped_doc();
  Json edited = doc;
  edited["nodes"]["second_review"] = {{"type", "agent"},
                                      {"owner", "code-reviewer"},
                                      {"routes", {{"approved", "documentation_review"}}},
                                      {"guards", Json::object()}};
  EXPECT_EQ(check_graph_keys(edited, doc), std::vector<std::string>{});
  edited["nodes"]["second_review"]["join"] = "all";
  EXPECT_EQ(check_graph_keys(edited, doc),
            std::vector<std::string>{
                "nodes.second_review.join: describes what devgraph always does (parallel "
                "personas join when every one has answered); no code reads it where the "
                "shipped graph has no such key"});
}

TEST(GraphKeys, AnEditedSkillIsCheckedAgainstTheShippedGraph) {
  test::Scratch dir;
  std::string text = test::slurp(test::source_dir() + "/skill/GRAPH.yaml");
  const std::string from = "\n  fail_closed: true\n";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "\n  fail_closed: false\n  retry_forever: true\n");
  test::write_text(dir / "GRAPH.yaml", text);
  EXPECT_EQ(check_skill_graph_keys(dir.path()),
            (std::vector<std::string>{
                "defaults.fail_closed: describes what devgraph always does (an unknown or "
                "malformed answer never advances a cursor); no code reads another value than "
                "true",
                "defaults.retry_forever: no code reads this key (a misspelt name, or a setting "
                "this engine lacks)"}));
  test::write_text(dir / "GRAPH.yaml", "version: [\n");
  auto unreadable = check_skill_graph_keys(dir.path());
  ASSERT_EQ(unreadable.size(), 1u);
  EXPECT_NE(unreadable[0].find("not valid YAML"), std::string::npos) << unreadable[0];
}

TEST(GraphKeys, PathsMatchByNameByAnyNameAndByListItem) {
  EXPECT_EQ(graph_key_for({"nodes", "anything", "routes", "done"})->path, "nodes.*.routes.*");
  EXPECT_EQ(graph_key_for({"discuss", "perspectives", "[3]", "name"})->path,
            "discuss.perspectives.[].name");
  EXPECT_EQ(graph_key_for({"discuss", "perspectives", "name"}), nullptr);
  EXPECT_EQ(graph_key_for({"nodes", "[0]", "type"}), nullptr);
  EXPECT_EQ(graph_key_for({"nodes", "scan"}), nullptr);
  EXPECT_EQ(graph_key_for({"version", "extra"}), nullptr);
  EXPECT_EQ(dotted({"discuss", "rounds", "[0]", "after"}), "discuss.rounds.[0].after");
}

}  // namespace
}  // namespace devgraph
