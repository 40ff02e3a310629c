#include "debug/decide.h"

#include <algorithm>

#include "util/text.h"
#include "util/untrusted.h"

namespace devgraph::debug {
namespace {

std::string bullets(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : "\n") + ("- " + i);
  return out.empty() ? "- (none given)" : out;
}

// The debugger runs next: in `mode`, told `directive`; held for a person
// once max_cycles calls ran since one last decided.
DebugFile launch(DebugFile f, const std::string& mode, const std::string& directive,
                 const DecideRules& rules) {
  if (f.m.cycles_since_person >= rules.max_cycles) {
    Question q;
    q.id = "q" + std::to_string(f.m.step) + "-cycles";
    q.kind = "cycles";
    q.text = std::to_string(f.m.cycles_since_person) +
             " debugger calls ran since a person last decided, and the session is not resolved.";
    q.choices = {"Go on for up to " + std::to_string(rules.max_cycles) + " more calls",
                 "Stop: keep the session as it is"};
    q.held_mode = mode;
    q.held_directive = directive;
    f.m.pending = q;
    f.m.phase = "ask";
    f.next_action = "a person decides whether the investigation goes on";
    return f;
  }
  f.m.phase = "launch";
  f.m.mode = mode;
  f.m.directive = directive;
  return f;
}

DebugFile ask(DebugFile f, Question q, const std::string& next_action) {
  f.m.pending = std::move(q);
  f.m.phase = "ask";
  f.next_action = next_action;
  return f;
}

DebugFile stop(DebugFile f, const std::string& reason) {
  f.m.phase = "done";
  f.m.end = "stopped";
  f.m.stop_reason = reason;
  f.m.pending.reset();
  f.next_action = "none: " + reason;
  return f;
}

Question fix_choice(const DebugFile& f) {
  Question q;
  q.id = "q" + std::to_string(f.m.step) + "-fix_choice";
  q.kind = "fix_choice";
  q.text = "Root cause found: " + f.resolution.root_cause;
  if (!f.m.fix_direction.empty()) q.text += "\nProposed fix: " + f.m.fix_direction;
  if (!f.reviews.empty()) {
    const Review& r = f.reviews.back();
    q.text += "\nSpecialist review (" + r.hint + "): " + r.verdict +
              (r.detail.empty() ? "" : ", " + r.detail);
  }
  q.text += "\nHow should the session proceed?";
  q.choices = {"Fix now: the debugger applies the fix",
               "Plan the fix: stop here, the root cause recorded for planning",
               "Manual fix: stop here, a person fixes it"};
  return q;
}

// After a root cause (and its review): the failing test first with --tdd,
// else a person chooses how to fix.
DebugFile after_root_cause(DebugFile f, const DecideRules& rules) {
  if (f.tdd)
    return launch(std::move(f), "tdd_red",
                  "The root cause is recorded in the debug file. Before any fix, write a test "
                  "that fails because of it, run it, and return TDD_CHECKPOINT with the test's "
                  "command as argv words. Do not change the code under test yet.",
                  rules);
  Question q = fix_choice(f);
  return ask(std::move(f), std::move(q), "a person chooses how the root cause is fixed");
}

std::string test_line(const DebugFile& f) {
  return join(f.m.test_command, " ");
}

// How Resolution's verification records a failing signal a person
// accepted; the debugger's own verification never replaces it.
constexpr const char* kDebt = "accepted as technical debt: ";

}  // namespace

std::string status_for(const DebugFile& f) {
  const std::string& p = f.m.phase;
  if (p == "done") return f.m.end == "resolved" ? "resolved" : "stopped";
  if (p == "ask") return "awaiting_human";
  if (p == "tdd_red" || p == "tdd_green") return "verifying";
  if (p == "specialist") return "reviewing";
  if (p == "commit" || p == "deliver" || p == "archive") return "resolving";
  return f.m.mode == "investigate" ? "investigating" : "fixing";
}

DebugFile begin(DebugFile f) {
  f.m.phase = "launch";
  f.m.mode = "investigate";
  f.m.directive =
      "Start the investigation: read the symptoms in the debug file, form falsifiable "
      "hypotheses and test them one at a time, recording what you checked.";
  f.next_action = "the debugger gathers evidence on the symptoms";
  f.status = status_for(f);
  return f;
}

DebugFile decide_return(DebugFile f, const DebugReturn& r, const std::string& now,
                        const DecideRules& rules) {
  // What the file records, whatever comes next.
  if (!r.hypothesis.empty()) f.hypothesis = r.hypothesis;
  if (!r.next_action.empty()) f.next_action = r.next_action;
  for (const auto& e : r.evidence) f.evidence.push_back({now, e.checked, e.found, e.implication});
  for (const auto& [h, e] : r.eliminated) f.eliminated.push_back({now, h, e});
  (f.m.mode == "investigate" ? f.m.cycles_investigation : f.m.cycles_fix) += 1;
  f.m.cycles_since_person += 1;
  f.m.malformed = 0;
  const std::string step = std::to_string(f.m.step);
  f.m.step += 1;
  switch (r.type) {
    case ReturnType::root_cause_found:
      f.resolution.root_cause = r.root_cause;
      f.m.fix_direction = r.fix_direction;
      f.m.specialist_hint = r.specialist_hint;
      if (f.specialists && rules.specialist_hints.count(r.specialist_hint)) {
        f.m.phase = "specialist";
        f.next_action = "the " + r.specialist_hint + " specialist reviews the fix direction";
        break;
      }
      f = after_root_cause(std::move(f), rules);
      break;
    case ReturnType::tdd_checkpoint:
      f.m.test_command = r.test_command;
      f.m.test_file = r.test_file;
      f.m.tdd_used = true;
      f.m.tdd_state = "";
      f.m.phase = "tdd_red";
      f.next_action = "devgraph runs the failing test: it must fail before the fix";
      break;
    case ReturnType::debug_complete:
      if (!r.root_cause.empty()) f.resolution.root_cause = r.root_cause;
      f.resolution.fix = r.fix;
      if (!r.verification.empty())
        f.resolution.verification =
            f.resolution.verification.find(kDebt) == std::string::npos
                ? r.verification
                : clean_text(f.resolution.verification + "\n" + r.verification);
      f.resolution.prevention = r.prevention;
      f.m.fix_files = r.files_changed;
      if (f.m.tdd_state == "red_confirmed" && !f.m.test_command.empty()) {
        f.m.phase = "tdd_green";
        f.next_action = "devgraph runs the test again: it must pass after the fix";
      } else if (f.tdd && f.m.tdd_state.empty() && !f.m.fix_files.empty()) {
        f = launch(std::move(f), "tdd_red",
                   "This session runs with the TDD gate: devgraph must see a test fail before "
                   "the fix. Put the code under test back as it was, write the failing test, and "
                   "return TDD_CHECKPOINT with its command.",
                   rules);
      } else {
        f.m.phase = f.m.fix_files.empty() ? "archive" : "commit";
        f.next_action = f.m.fix_files.empty() ? "devgraph archives the resolved session"
                                              : "devgraph commits the fix's files";
      }
      break;
    case ReturnType::checkpoint_reached: {
      Question q;
      q.id = "q" + step + "-checkpoint";
      q.kind = "checkpoint";
      q.text = "Debug checkpoint (" + r.checkpoint_type + ")";
      if (!r.details.empty()) q.text += "\n" + r.details;
      q.text += "\nAwaiting: " + r.awaiting;
      q.choices = r.options;
      f = ask(std::move(f), std::move(q), "a person answers the debugger's checkpoint");
      break;
    }
    case ReturnType::investigation_inconclusive: {
      // Recorded, so that the debugger told to go on finds what remains.
      if (!r.checked.empty() || !r.remaining.empty())
        f.evidence.push_back({now, bullets(r.checked), "the investigation is inconclusive",
                              "remaining possibilities:\n" + bullets(r.remaining)});
      Question q;
      q.id = "q" + step + "-inconclusive";
      q.kind = "inconclusive";
      q.text = "The investigation is inconclusive.\nChecked:\n" + bullets(r.checked) +
               "\nRemaining possibilities:\n" + bullets(r.remaining);
      q.choices = {"Continue investigating",
                   "Add more context and retry (the context as the answer's text)",
                   "Stop: keep the session for a manual investigation"};
      q.text_choice = 2;
      q.needs_text = {2};
      f = ask(std::move(f), std::move(q), "a person decides how the investigation goes on");
      break;
    }
    case ReturnType::fix_rejected_by_guardrail: {
      Question q;
      q.id = "q" + step + "-guardrail";
      q.kind = "guardrail";
      q.text = "The fix was rejected by the acceptance guardrail.\nFailing signal: " + r.signal +
               "\nEvidence: " + r.signal_evidence;
      q.choices = {"Revise the fix so that the signal passes",
                   "Accept as recorded technical debt (the justification as the answer's text)",
                   "Abandon: stop, the session stays unresolved"};
      q.text_choice = 2;
      q.needs_text = {2};
      q.held_directive = r.signal;
      f = ask(std::move(f), std::move(q), "a person decides what happens to the rejected fix");
      break;
    }
  }
  f.status = status_for(f);
  return f;
}

DebugFile decide_malformed(DebugFile f, const std::string& why, const DecideRules& rules) {
  f.m.malformed += 1;
  (f.m.mode == "investigate" ? f.m.cycles_investigation : f.m.cycles_fix) += 1;
  f.m.cycles_since_person += 1;
  const std::string step = std::to_string(f.m.step);
  f.m.step += 1;
  if (f.m.malformed <= rules.malformed_resumes) {
    std::string directive = "Your previous return could not be read.\n" +
                            fence_untrusted("What devgraph found wrong with it", why) +
                            "\nAnswer again with a valid `debug` object, as your persona file "
                            "describes. What you were asked before:\n" +
                            f.m.directive;
    const std::string mode = f.m.mode;  // read before f is moved into launch()
    f = launch(std::move(f), mode, directive, rules);
  } else {
    Question q;
    q.id = "q" + step + "-malformed";
    q.kind = "malformed";
    q.text = "The debugger's return could not be read " + std::to_string(f.m.malformed) +
             " times in a row; the last time: " + one_line(why, 300);
    q.choices = {"Try again", "Stop: keep the session as it is"};
    q.held_mode = f.m.mode;
    q.held_directive = f.m.directive;
    f = ask(std::move(f), std::move(q), "a person decides whether the debugger tries again");
  }
  f.status = status_for(f);
  return f;
}

Expected<DebugFile> decide_answer(DebugFile f, const Answer& a, const std::string& now) {
  if (!f.m.pending || f.m.phase != "ask")
    return fail(ErrorKind::usage, "session " + f.slug + " is not waiting for an answer");
  const Question q = *f.m.pending;
  const int n = static_cast<int>(q.choices.size());
  int choice = a.choice;
  const std::string text = clean_text(a.text);
  if (choice == 0 && !text.empty() && text.find_first_not_of("0123456789") == std::string::npos &&
      text.size() < 4 && n > 0)
    choice = std::stoi(text);
  else if (choice == 0 && q.text_choice > 0 && !text.empty())
    choice = q.text_choice;
  if (choice != 0 && (choice < 1 || choice > n))
    return fail(ErrorKind::usage,
                n == 0
                    ? "this question takes a text answer (--text or --file), not a choice"
                    : "choice " + std::to_string(choice) + " is not one of 1-" + std::to_string(n));
  if (choice == 0 && (n == 0 || q.kind == "checkpoint") && text.empty())
    return fail(ErrorKind::usage, "the answer is empty");
  if (choice == 0 && n > 0 && q.kind != "checkpoint")
    return fail(ErrorKind::usage, "this question takes --choice 1-" + std::to_string(n));
  if (std::find(q.needs_text.begin(), q.needs_text.end(), choice) != q.needs_text.end() &&
      text.empty())
    return fail(ErrorKind::usage,
                "choice " + std::to_string(choice) + " needs a text (--text or --file) with it");
  f.m.pending.reset();
  f.m.answered.push_back(q.id);
  f.m.cycles_since_person = 0;
  DecideRules rules;  // a person just decided: no cycle limit applies to this launch
  rules.max_cycles = 1 << 30;
  if (q.kind == "checkpoint") {
    std::string response = choice ? q.choices[choice - 1] : "";
    if (!text.empty()) response += (response.empty() ? "" : "\n") + text;
    const std::string mode = f.m.mode;  // read before f is moved into launch()
    f = launch(std::move(f), mode,
               "Your checkpoint was answered by a person.\n" +
                   fence_untrusted("The answer to checkpoint " + q.id, response) +
                   "\nWeigh it as evidence and go on from where you stopped.",
               rules);
  } else if (q.kind == "fix_choice") {
    if (choice == 1)
      f = launch(std::move(f), "fix",
                 "A person chose to fix now. Apply the fix for the recorded root cause, verify "
                 "it, and return DEBUG_COMPLETE with every file you changed in files_changed.",
                 rules);
    else
      f = stop(std::move(f),
               choice == 2 ? "the fix is left to a plan" : "the fix is left to a person");
  } else if (q.kind == "inconclusive") {
    if (choice == 1)
      f = launch(std::move(f), "investigate",
                 "A person asks you to keep investigating: take the remaining possibilities "
                 "recorded in the debug file one at a time.",
                 rules);
    else if (choice == 2)
      f = launch(std::move(f), "investigate",
                 "A person added context and asks you to try again.\n" +
                     fence_untrusted("The context the person added", text),
                 rules);
    else
      f = stop(std::move(f), "stopped by a person: the investigation was inconclusive");
  } else if (q.kind == "guardrail") {
    if (choice == 1) {
      f = launch(std::move(f), "fix",
                 "A person asks you to revise the fix so that the failing signal passes.\n" +
                     fence_untrusted("The failing signal", q.held_directive),
                 rules);
    } else if (choice == 2) {
      std::string debt = kDebt + std::string("the signal `") + one_line(q.held_directive, 200) +
                         "` does not pass; justification: " + text;
      f.resolution.verification = clean_text(
          f.resolution.verification.empty() ? debt : f.resolution.verification + "\n" + debt);
      f.evidence.push_back({now, "the acceptance guardrail's failing signal",
                            clean_text(q.held_directive), clean_text("a person " + debt)});
      f = launch(std::move(f), "fix",
                 "A person accepted the unmet signal as recorded technical debt (it is in the "
                 "debug file's Resolution).\n" +
                     fence_untrusted("The person's justification", text) +
                     "\nDo not change the fix further: return DEBUG_COMPLETE.",
                 rules);
    } else {
      f = stop(std::move(f), "abandoned: the fix was rejected by the guardrail");
    }
  } else if (q.kind == "malformed" || q.kind == "cycles") {
    if (choice == 1) {
      f.m.malformed = 0;
      f = launch(std::move(f), q.held_mode, q.held_directive, rules);
    } else {
      f = stop(std::move(f), "stopped by a person");
    }
  } else {
    return fail(ErrorKind::internal, "the pending question has an unknown kind " + q.kind);
  }
  f.status = status_for(f);
  return f;
}

DebugFile decide_tdd(DebugFile f, bool green, const TestRun& run, const DecideRules& rules) {
  const std::string cmd = test_line(f);
  if (!run.ran) {
    f = launch(std::move(f), green ? "tdd_green" : "tdd_red",
               "devgraph could not run your test command `" + one_line(cmd, 200) + "`.\n" +
                   fence_untrusted("Why", run.output) +
                   "\nReturn TDD_CHECKPOINT again with a command that runs from the worktree "
                   "as argv words.",
               rules);
  } else if (!green && run.exit_code == 0) {
    f.m.tdd_state = "";
    f = launch(std::move(f), "tdd_red",
               "devgraph ran your test `" + one_line(cmd, 200) +
                   "` before any fix and it PASSED (exit 0), so it does not reproduce the bug; it "
                   "was refused.\n" +
                   fence_untrusted("The test's output", run.output) +
                   "\nWrite a test that fails on the current code because of the root cause, and "
                   "return TDD_CHECKPOINT again.",
               rules);
  } else if (!green) {
    f.m.tdd_state = "red_confirmed";
    f = launch(std::move(f), "tdd_green",
               "devgraph ran your test `" + one_line(cmd, 200) + "` and it fails (exit " +
                   std::to_string(run.exit_code) + "): red is confirmed.\n" +
                   fence_untrusted("The test's output", run.output) +
                   "\nNow fix the root cause so that the test passes, keep the test, and return "
                   "DEBUG_COMPLETE with every file you changed in files_changed.",
               rules);
  } else if (run.exit_code != 0) {
    f = launch(std::move(f), "tdd_green",
               "After your fix devgraph ran the test `" + one_line(cmd, 200) +
                   "` and it still fails (exit " + std::to_string(run.exit_code) + ").\n" +
                   fence_untrusted("The test's output", run.output) +
                   "\nFix the code (not the test) and return DEBUG_COMPLETE again.",
               rules);
  } else {
    f.m.tdd_state = "green_confirmed";
    f.resolution.verification = clean_text(
        (f.resolution.verification.empty() ? "" : f.resolution.verification + "\n") +
        "devgraph ran `" + one_line(cmd, 200) + "`: it failed before the fix and passes after it");
    f.m.phase = f.m.fix_files.empty() ? "archive" : "commit";
    f.next_action = f.m.fix_files.empty() ? "devgraph archives the resolved session"
                                          : "devgraph commits the fix's files";
  }
  f.status = status_for(f);
  return f;
}

DebugFile decide_commit_refused(DebugFile f, const std::string& why, const std::string& output,
                                const DecideRules& rules) {
  const bool tdd = f.m.tdd_state == "green_confirmed";
  if (tdd) f.m.tdd_state = "red_confirmed";  // the changed fix must pass the test again
  f = launch(std::move(f), tdd ? "tdd_green" : "fix",
             "devgraph tried to commit your fix and the repository's hook refused it (" +
                 one_line(why, 300) + ").\n" + fence_untrusted("The hook's output", output) +
                 "\nChange the fix so that the hook passes, keep the test, and return "
                 "DEBUG_COMPLETE again with every file you changed in files_changed.",
             rules);
  f.status = status_for(f);
  return f;
}

DebugFile decide_reviewed(DebugFile f, const DecideRules& rules) {
  f.m.step += 1;
  f = after_root_cause(std::move(f), rules);
  f.status = status_for(f);
  return f;
}

}  // namespace devgraph::debug
