#include "demo/sample.h"

#include <map>

namespace devgraph::demo {

std::vector<SampleFile> sample_base_files() {
  return {
      {".gitignore", "__pycache__/\n*.pyc\n"},
      {"README.md",
       "# tally\n\nSmall text statistics in plain Python.\n\n"
       "Run the tests with `python3 -m unittest discover -s tests -t .`.\n"},
      {"tally/__init__.py", "\"\"\"Small text statistics.\"\"\"\n"},
      {"tally/words.py",
       "\"\"\"Splitting text into words.\"\"\"\n\n\n"
       "def words(text):\n"
       "    \"\"\"The whitespace-separated words of text, in order.\"\"\"\n"
       "    return text.split()\n"},
      {"tests/__init__.py", ""},
      {"tests/test_words.py",
       "import unittest\n\nfrom tally.words import words\n\n\n"
       "class WordsTest(unittest.TestCase):\n"
       "    def test_splits_on_whitespace(self):\n"
       "        self.assertEqual(words(\"a  b\\nc\"), [\"a\", \"b\", \"c\"])\n"},
  };
}

namespace {

SampleTask normalize_task() {
  return {"normalize",
          "",
          "Normalize words",
          {},
          {},
          {"tests/test_normalize.py",
           "import unittest\n\nfrom tally.normalize import normalize\n\n\n"
           "class NormalizeTest(unittest.TestCase):\n"
           "    def test_lowercases(self):\n"
           "        self.assertEqual(normalize(\"Hello\"), \"hello\")\n\n"
           "    def test_strips_punctuation_at_both_ends(self):\n"
           "        self.assertEqual(normalize('\"end.\"'), \"end\")\n\n"
           "    def test_keeps_an_inner_apostrophe(self):\n"
           "        self.assertEqual(normalize(\"don't\"), \"don't\")\n"},
          {"tally/normalize.py",
           "\"\"\"Normalizing words for counting.\"\"\"\nimport string\n\n\n"
           "def normalize(word):\n"
           "    \"\"\"Lower-case word and strip punctuation from both ends.\"\"\"\n"
           "    return word.strip(string.punctuation).lower()\n"}};
}

SampleTask counts_task() {
  return {"counts",
          "",
          "Count word frequencies",
          {"normalize"},
          {},
          {"tests/test_counts.py",
           "import unittest\n\nfrom tally.counts import counts, top\n\n\n"
           "class CountsTest(unittest.TestCase):\n"
           "    def test_counts_normalized_words(self):\n"
           "        self.assertEqual(counts(\"The cat. the CAT!\")[\"the\"], 2)\n\n"
           "    def test_skips_pure_punctuation(self):\n"
           "        self.assertNotIn(\"\", counts(\"a -- b\"))\n\n"
           "    def test_top_breaks_ties_alphabetically(self):\n"
           "        self.assertEqual(top(\"b a b a c\", 2), [(\"a\", 2), (\"b\", 2)])\n"},
          {"tally/counts.py",
           "\"\"\"Word frequencies.\"\"\"\nfrom collections import Counter\n\n"
           "from tally.normalize import normalize\nfrom tally.words import words\n\n\n"
           "def counts(text):\n"
           "    \"\"\"How often each normalized word occurs; empty words are skipped.\"\"\"\n"
           "    return Counter(w for w in (normalize(x) for x in words(text)) if w)\n\n\n"
           "def top(text, n):\n"
           "    \"\"\"The n most frequent words as (word, count), ties alphabetical.\"\"\"\n"
           "    return sorted(counts(text).items(), key=lambda kv: (-kv[1], kv[0]))[:n]\n"}};
}

SampleTask lines_task() {
  return {"lines",
          "",
          "Line statistics",
          {},
          {},
          {"tests/test_lines.py",
           "import unittest\n\nfrom tally.lines import line_stats\n\n\n"
           "class LinesTest(unittest.TestCase):\n"
           "    def test_counts_lines_and_blank_lines(self):\n"
           "        self.assertEqual(line_stats(\"a\\n\\n  \\nb\\n\"), (4, 2))\n\n"
           "    def test_a_final_newline_starts_no_line(self):\n"
           "        self.assertEqual(line_stats(\"a\\nb\"), line_stats(\"a\\nb\\n\"))\n\n"
           "    def test_empty_text(self):\n"
           "        self.assertEqual(line_stats(\"\"), (0, 0))\n"},
          {"tally/lines.py",
           "\"\"\"Line statistics.\"\"\"\n\n\n"
           "def line_stats(text):\n"
           "    \"\"\"(lines, blank lines); a final newline does not start a line.\"\"\"\n"
           "    lines = text.splitlines()\n"
           "    return len(lines), sum(1 for line in lines if not line.strip())\n"}};
}

SampleTask chars_task() {
  return {"chars",
          "",
          "Character classes",
          {},
          {},
          {"tests/test_chars.py",
           "import unittest\n\nfrom tally.chars import char_classes\n\n\n"
           "class CharClassesTest(unittest.TestCase):\n"
           "    def test_counts_each_class(self):\n"
           "        self.assertEqual(\n"
           "            char_classes(\"Hi 42!\\n\"),\n"
           "            {\"letters\": 2, \"digits\": 2, \"whitespace\": 2, \"other\": 1},\n"
           "        )\n\n"
           "    def test_letters_of_any_script(self):\n"
           "        self.assertEqual(char_classes(\"\\u00e9t\\u00e9\")[\"letters\"], 3)\n\n"
           "    def test_the_counts_add_up_to_the_length(self):\n"
           "        text = \"a\\tb, c-3 \\u2014 d\"\n"
           "        self.assertEqual(sum(char_classes(text).values()), len(text))\n"},
          {"tally/chars.py",
           "\"\"\"Character classes.\"\"\"\n\n\n"
           "def char_classes(text):\n"
           "    \"\"\"How many letters, digits, whitespace and other characters text holds.\"\"\"\n"
           "    classes = {\"letters\": 0, \"digits\": 0, \"whitespace\": 0, \"other\": 0}\n"
           "    for c in text:\n"
           "        if c.isalpha():\n"
           "            classes[\"letters\"] += 1\n"
           "        elif c.isdigit():\n"
           "            classes[\"digits\"] += 1\n"
           "        elif c.isspace():\n"
           "            classes[\"whitespace\"] += 1\n"
           "        else:\n"
           "            classes[\"other\"] += 1\n"
           "    return classes\n"}};
}

}  // namespace

std::vector<SampleIssue> sample_issues() {
  return {
      {"epic",
       "A text report for tally",
       "tally should print a short report of a text file: how many words it uses and\n"
       "which ones most, so that a writer sees at a glance what a draft leans on.\n\n"
       "This epic is the word half of the report. Its two children share one branch,\n"
       "since counting needs the normalization:\n\n"
       "- [ ] Normalize words\n"
       "- [ ] Count words\n\n"
       "Acceptance criteria:\n"
       "- both children are delivered on one branch whose tests pass\n"
       "- nothing outside `tally/` and `tests/` changes\n",
       {"report"},
       "",
       true,
       {}},
      {"normalize",
       "Normalize words",
       "Counting words needs one spelling per word: \"The\", \"the\" and \"the,\" are\n"
       "the same word to a reader and must be the same word to tally.\n\n"
       "Add `tally.normalize.normalize(word)`.\n\n"
       "Acceptance criteria:\n"
       "- AC1 a word is lower-cased (\"Hello\" -> \"hello\")\n"
       "- AC2 punctuation at either end is stripped ('\"end.\"' -> \"end\")\n"
       "- AC3 an inner apostrophe stays (\"don't\" -> \"don't\")\n",
       {"report"},
       "epic",
       false,
       {normalize_task()}},
      {"counts",
       "Count words",
       "The report lists the most frequent words. Count them over the normalized\n"
       "words of `tally.words.words(text)`.\n\n"
       "Add `tally.counts.counts(text)` and `tally.counts.top(text, n)`.\n\n"
       "Acceptance criteria:\n"
       "- AC1 counts are of normalized words (\"The cat. the CAT!\" has \"the\" twice)\n"
       "- AC2 a word of punctuation only (\"--\") is not counted\n"
       "- AC3 `top` gives the n most frequent words as (word, count), ties broken\n"
       "  alphabetically\n\n"
       "Needs \"Normalize words\" first.\n",
       {"report"},
       "epic",
       false,
       {counts_task()}},
      {"lines",
       "Line statistics",
       "For the report's header: how long a text is in lines, and how much of it is\n"
       "blank.\n\n"
       "Add `tally.lines.line_stats(text)`, returning `(lines, blank_lines)`.\n\n"
       "Acceptance criteria:\n"
       "- AC1 a line holding only whitespace is blank\n"
       "- AC2 a final newline ends the last line; it does not start another\n"
       "- AC3 empty text has no lines\n",
       {"stats"},
       "",
       false,
       {lines_task()}},
      {"chars",
       "Character classes",
       "A quick check for stray characters: how much of a text is letters, digits,\n"
       "whitespace or anything else.\n\n"
       "Add `tally.chars.char_classes(text)`, returning a dict with the keys\n"
       "`letters`, `digits`, `whitespace` and `other`.\n\n"
       "Acceptance criteria:\n"
       "- AC1 letters of any script count (`str.isalpha`), digits by `str.isdigit`\n"
       "- AC2 whitespace includes newlines and tabs\n"
       "- AC3 everything else is `other`: the four counts add up to `len(text)`\n",
       {"stats"},
       "",
       false,
       {chars_task()}},
  };
}

const SampleIssue* sample_issue(const std::vector<SampleIssue>& issues, const std::string& title) {
  for (const auto& i : issues)
    if (i.title == title) return &i;
  return nullptr;
}

Expected<std::vector<SampleTask>> sample_plan(const std::vector<std::string>& titles) {
  auto issues = sample_issues();
  std::vector<SampleTask> out;
  std::map<std::string, std::string> id_of;
  for (const auto& title : titles) {
    const SampleIssue* issue = sample_issue(issues, title);
    if (!issue) return fail(ErrorKind::usage, "no sample issue is titled '" + title + "'");
    for (const auto& t : issue->tasks) {
      SampleTask task = t;
      task.id = "T" + std::to_string(out.size() + 1);
      for (const auto& a : task.after) {
        auto it = id_of.find(a);
        if (it == id_of.end())
          return fail(ErrorKind::usage, "task '" + task.title + "' of '" + title +
                                            "' depends on '" + a +
                                            "', which is not planned before it in this bundle");
        task.depends_on.push_back(it->second);
      }
      id_of[task.key] = task.id;
      out.push_back(std::move(task));
    }
  }
  return out;
}

Json sample_scenario(const std::vector<SampleBundle>& bundles, long long latency_ms) {
  std::string plan_dir = "docs/develop/plans/";
  auto done = [](const std::string& summary) {
    return Json{{"status", "DONE"}, {"summary", summary}, {"evidence", Json::array()}};
  };
  Json planner = Json::array(), tdd = Json::array(), dev = Json::array();
  for (const auto& b : bundles) {
    Json tasks_doc = {{"bundle", b.id}, {"tasks", Json::array()}};
    std::string plan = "# Plan for bundle " + b.id + "\n";
    for (const auto& t : b.tasks) {
      tasks_doc["tasks"].push_back({{"id", t.id},
                                    {"title", t.title},
                                    {"depends_on", t.depends_on},
                                    {"files", Json::array({t.impl.path, t.test.path})}});
      plan += "\n## Task " + t.id + ": " + t.title + "\n\nAdd `" + t.impl.path +
              "` and its tests in `" + t.test.path + "`" +
              (t.depends_on.empty() ? std::string(".") : ", after " + t.depends_on.front() + ".") +
              "\n";
    }
    std::string n = std::to_string(b.tasks.size());
    planner.push_back(
        {{"bundle", b.id},
         {"latency_ms", latency_ms},
         {"files", Json::array({{{"path", plan_dir + "{bundle}.md"}, {"content", plan}},
                                {{"path", plan_dir + "{bundle}.tasks.json"},
                                 {"content", dump_py(tasks_doc, 2) + "\n"}}})},
         {"result", done("planned " + n + (n == "1" ? " task" : " tasks") + " for {bundle}")}});
    for (const auto& t : b.tasks) {
      Json red = done("failing tests for {bundle}/{task} in " + t.test.path);
      red["evidence"] =
          Json::array({"ModuleNotFoundError on the base code: " + t.impl.path + " is missing"});
      red["commands"] = Json::array({std::string("python3 -m unittest ") + t.test.path});
      tdd.push_back({{"bundle", b.id},
                     {"task", t.id},
                     {"latency_ms", latency_ms},
                     {"files", Json::array({{{"path", t.test.path}, {"content", t.test.content}}})},
                     {"result", red}});
      Json green = done("implemented {bundle}/{task} in " + t.impl.path);
      green["commands"] = Json::array({kSampleTestCommand});
      dev.push_back({{"bundle", b.id},
                     {"task", t.id},
                     {"latency_ms", latency_ms},
                     {"files", Json::array({{{"path", t.impl.path}, {"content", t.impl.content}}})},
                     {"result", green}});
    }
  }
  // The critics of the discuss rounds (the demo turns them on): each
  // perspective rates the plan and the finished branch well, so every
  // round reaches consensus and the bundles go on.
  Json critic = Json::array();
  const std::pair<const char*, const char*> views[] = {
      {"product", "each issue's user gets what the issue asks for"},
      {"technical", "small modules with one test file each"},
      {"quality", "every change comes with a test that failed first"},
      {"risk", "nothing outside the sample package changes"},
      {"coverage", "every requirement of the bundle's issues is planned"}};
  for (const auto& [name, strength] : views) {
    Json c = {{"perspective", name},
              {"strengths", Json::array({strength})},
              {"weaknesses", Json::array()},
              {"suggestions", Json::array({"keep the tests next to the code they check"})},
              {"rating", 4}};
    if (std::string(name) == "risk") c["risk_level"] = "low";
    if (std::string(name) == "coverage") c["missing_requirements"] = Json::array();
    Json r = done("{bundle} rates it 4 of 5");
    r["critique"] = c;
    critic.push_back({{"bundle", name}, {"latency_ms", latency_ms}, {"result", r}});
  }
  Json personas = {
      {"planner", planner}, {"tdd-writer", tdd}, {"developer", dev}, {"critic", critic}};
  return Json{
      {"default", {{"latency_ms", latency_ms}, {"result", done("{persona} approves {task}")}}},
      {"personas", personas}};
}

}  // namespace devgraph::demo
