#include "demo/sample.h"

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

std::vector<SampleTask> sample_tasks() {
  return {
      {"T1",
       "Normalise words",
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
        "\"\"\"Normalising words for counting.\"\"\"\nimport string\n\n\n"
        "def normalize(word):\n"
        "    \"\"\"Lower-case word and strip punctuation from both ends.\"\"\"\n"
        "    return word.strip(string.punctuation).lower()\n"}},
      {"T2",
       "Count word frequencies",
       {"T1"},
       {"tests/test_counts.py",
        "import unittest\n\nfrom tally.counts import counts, top\n\n\n"
        "class CountsTest(unittest.TestCase):\n"
        "    def test_counts_normalised_words(self):\n"
        "        self.assertEqual(counts(\"The cat. the CAT!\")[\"the\"], 2)\n\n"
        "    def test_skips_pure_punctuation(self):\n"
        "        self.assertNotIn(\"\", counts(\"a -- b\"))\n\n"
        "    def test_top_breaks_ties_alphabetically(self):\n"
        "        self.assertEqual(top(\"b a b a c\", 2), [(\"a\", 2), (\"b\", 2)])\n"},
       {"tally/counts.py",
        "\"\"\"Word frequencies.\"\"\"\nfrom collections import Counter\n\n"
        "from tally.normalize import normalize\nfrom tally.words import words\n\n\n"
        "def counts(text):\n"
        "    \"\"\"How often each normalised word occurs; empty words are skipped.\"\"\"\n"
        "    return Counter(w for w in (normalize(x) for x in words(text)) if w)\n\n\n"
        "def top(text, n):\n"
        "    \"\"\"The n most frequent words as (word, count), ties alphabetical.\"\"\"\n"
        "    return sorted(counts(text).items(), key=lambda kv: (-kv[1], kv[0]))[:n]\n"}},
      {"T3",
       "Line statistics",
       {},
       {"tests/test_lines.py",
        "import unittest\n\nfrom tally.lines import line_stats\n\n\n"
        "class LinesTest(unittest.TestCase):\n"
        "    def test_counts_lines_and_blank_lines(self):\n"
        "        self.assertEqual(line_stats(\"a\\n\\n  \\nb\\n\"), (4, 2))\n\n"
        "    def test_empty_text(self):\n"
        "        self.assertEqual(line_stats(\"\"), (0, 0))\n"},
       {"tally/lines.py",
        "\"\"\"Line statistics.\"\"\"\n\n\n"
        "def line_stats(text):\n"
        "    \"\"\"(lines, blank lines); a final newline does not start a line.\"\"\"\n"
        "    lines = text.splitlines()\n"
        "    return len(lines), sum(1 for line in lines if not line.strip())\n"}},
      {"T4",
       "Plain-text report",
       {"T2", "T3"},
       {"tests/test_report.py",
        "import unittest\n\nfrom tally.report import report\n\n\n"
        "class ReportTest(unittest.TestCase):\n"
        "    def test_report_lists_lines_words_and_the_top_word(self):\n"
        "        self.assertEqual(\n"
        "            report(\"the cat\\n\\nthe dog\\n\", 1),\n"
        "            \"lines: 3\\nblank lines: 1\\ndistinct words: 3\\nthe: 2\\n\",\n"
        "        )\n"},
       {"tally/report.py",
        "\"\"\"A plain-text report of a document's statistics.\"\"\"\n"
        "from tally.counts import counts, top\nfrom tally.lines import line_stats\n\n\n"
        "def report(text, n=3):\n"
        "    \"\"\"Lines, blank lines, distinct words and the n most frequent words.\"\"\"\n"
        "    lines, blank = line_stats(text)\n"
        "    out = [\n"
        "        f\"lines: {lines}\",\n"
        "        f\"blank lines: {blank}\",\n"
        "        f\"distinct words: {len(counts(text))}\",\n"
        "    ]\n"
        "    out += [f\"{word}: {count}\" for word, count in top(text, n)]\n"
        "    return \"\\n\".join(out) + \"\\n\"\n"}},
      {"T5",
       "Command line",
       {"T4"},
       {"tests/test_cli.py",
        "import io\nimport os\nimport tempfile\nimport unittest\n\nfrom tally.cli import main\n\n\n"
        "class CliTest(unittest.TestCase):\n"
        "    def test_prints_the_report_of_a_file(self):\n"
        "        with tempfile.TemporaryDirectory() as d:\n"
        "            path = os.path.join(d, \"in.txt\")\n"
        "            with open(path, \"w\", encoding=\"utf-8\") as f:\n"
        "                f.write(\"a b a\\n\")\n"
        "            out = io.StringIO()\n"
        "            self.assertEqual(main([path, \"--top\", \"1\"], stdout=out), 0)\n"
        "            self.assertEqual(\n"
        "                out.getvalue(), \"lines: 1\\nblank lines: 0\\ndistinct words: 2\\na: "
        "2\\n\"\n"
        "            )\n"},
       {"tally/cli.py",
        "\"\"\"Command line: python3 -m tally.cli FILE [--top N].\"\"\"\n"
        "import argparse\nimport sys\n\nfrom tally.report import report\n\n\n"
        "def main(argv=None, stdout=None):\n"
        "    parser = argparse.ArgumentParser(prog=\"tally\")\n"
        "    parser.add_argument(\"file\")\n"
        "    parser.add_argument(\"--top\", type=int, default=3)\n"
        "    args = parser.parse_args(argv)\n"
        "    with open(args.file, encoding=\"utf-8\") as f:\n"
        "        (stdout or sys.stdout).write(report(f.read(), args.top))\n"
        "    return 0\n\n\n"
        "if __name__ == \"__main__\":\n"
        "    sys.exit(main())\n"}},
  };
}

std::string sample_spec(const std::string& bundle) {
  return "# Bundle " + bundle +
         ": a text report for tally\n\n"
         "Add a `tally` command that prints, for a text file: its number of lines, its number\n"
         "of blank lines, its number of distinct words (case and surrounding punctuation\n"
         "ignored) and its most frequent words.\n\n"
         "Acceptance criteria:\n"
         "- AC1 words are compared lower-cased, without punctuation at either end\n"
         "- AC2 frequencies break ties alphabetically\n"
         "- AC3 line counts treat a final newline as the end of the last line\n"
         "- AC4 `python3 -m tally.cli FILE --top N` prints the report\n";
}

Json sample_scenario(const std::string& bundle, long long latency_ms) {
  auto tasks = sample_tasks();
  std::string plan_dir = "docs/develop/plans/";
  Json tasks_doc = {{"bundle", bundle}, {"tasks", Json::array()}};
  std::string plan = "# Plan for bundle " + bundle + "\n\nCritical path: T1 -> T2 -> T4 -> T5.\n";
  for (const auto& t : tasks) {
    tasks_doc["tasks"].push_back({{"id", t.id},
                                  {"title", t.title},
                                  {"depends_on", t.depends_on},
                                  {"files", Json::array({t.impl.path, t.test.path})}});
    plan += "\n## Task " + t.id + ": " + t.title + "\n\nAdd `" + t.impl.path +
            "` and its tests in `" + t.test.path + "`.\n";
  }
  auto done = [](const std::string& summary) {
    return Json{{"status", "DONE"}, {"summary", summary}, {"evidence", Json::array()}};
  };
  Json personas = Json::object();
  personas["planner"] =
      Json::array({{{"latency_ms", latency_ms},
                    {"files", Json::array({{{"path", plan_dir + bundle + ".md"}, {"content", plan}},
                                           {{"path", plan_dir + bundle + ".tasks.json"},
                                            {"content", dump_py(tasks_doc, 2) + "\n"}}})},
                    {"result", done("planned " + std::to_string(tasks.size()) + " tasks")}}});
  Json tdd = Json::array(), dev = Json::array();
  for (const auto& t : tasks) {
    Json red = done("failing tests for {task} in " + t.test.path);
    red["evidence"] =
        Json::array({"ModuleNotFoundError on the base code: " + t.impl.path + " is missing"});
    tdd.push_back({{"task", t.id},
                   {"latency_ms", latency_ms},
                   {"files", Json::array({{{"path", t.test.path}, {"content", t.test.content}}})},
                   {"result", red}});
    Json green = done("implemented {task} in " + t.impl.path);
    green["commands"] = Json::array({kSampleTestCommand});
    dev.push_back({{"task", t.id},
                   {"latency_ms", latency_ms},
                   {"files", Json::array({{{"path", t.impl.path}, {"content", t.impl.content}}})},
                   {"result", green}});
  }
  personas["tdd-writer"] = tdd;
  personas["developer"] = dev;
  return Json{
      {"default", {{"latency_ms", latency_ms}, {"result", done("{persona} approves {task}")}}},
      {"personas", personas}};
}

}  // namespace devgraph::demo
