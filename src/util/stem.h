// A word's stem, by which free text is matched word for word: a question
// against the repository's lines (bundle/context_search.h), a critique's
// points against each other (discuss/rules.h).
//
// Contract: the word in lower case (ASCII), then a few English suffix
// rules, enough that the forms a word is written in meet: a plural
// ("entries", "boxes", "reports"), -ing and -ed (a consonant the suffix
// doubled goes too: "stopped", "running") and a final e ("date", "dates",
// "dated" and "dating" all give "dat"; "handle", "handled" and "handling"
// give "handl"). Short words are left alone ("is", "bus", "class" keep
// their s). Pure; bytes beyond ASCII pass through.
#pragma once

#include <string>
#include <string_view>

namespace devgraph {

std::string word_stem(std::string_view word);

}  // namespace devgraph
