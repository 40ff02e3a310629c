// Whole-process timings of several commands taken in turn, so that every
// command sees the same minutes of a shared, noisy machine. hyperfine runs
// all of one command's runs before the next command's; when the machine's
// speed drifts between the two, that drift shows up as a difference
// between the commands. Here each round runs every command once, starting
// with a different one each round, and the rounds repeat.
//
// usage: alternate ROUNDS SPEC [WARMUP]
//   SPEC    one command per line: LABEL EVERY WORD...
//           The words are split on spaces (no quoting); leading NAME=VALUE
//           words are added to the child's environment. EVERY k runs the
//           command only in every k-th round (for a slow command such as
//           the reference, timed in the same minutes but fewer times).
//           A command labelled "between" is not timed: it runs before
//           every timed command (bench/evict_caches, so that each timed
//           run starts with cold caches, as a command does that follows
//           other work). Empty lines and lines starting with '#' are
//           skipped.
//   WARMUP  rounds run first and not recorded (default 3)
//
// Prints one line per run, "ROUND LABEL WALL_NS CPU_NS" (CPU is the
// child's user plus system time from wait4), for bench/fast_paths.py to
// summarize. The children's output goes to /dev/null; a child that fails
// stops the measurement, naming the command.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

struct Command {
  std::string label;
  long every = 1;
  std::vector<std::string> words;  // argv
  std::vector<std::string> env;    // the parent's environment plus NAME=VALUE words
};

long long now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<long long>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

long long cpu_ns(const rusage& ru) {
  auto ns = [](const timeval& tv) {
    return static_cast<long long>(tv.tv_sec) * 1'000'000'000 + tv.tv_usec * 1000LL;
  };
  return ns(ru.ru_utime) + ns(ru.ru_stime);
}

bool parse_spec(const char* path, std::vector<Command>& out) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    Command c;
    if (!(words >> c.label >> c.every) || c.every < 1) return false;
    for (char** e = environ; *e != nullptr; ++e) c.env.emplace_back(*e);
    std::string w;
    while (words >> w) {
      const auto eq = w.find('=');
      if (c.words.empty() && eq != std::string::npos && eq > 0 && w[0] != '/') {
        c.env.push_back(w);
      } else {
        c.words.push_back(w);
      }
    }
    if (c.words.empty()) return false;
    out.push_back(std::move(c));
  }
  return !out.empty();
}

std::vector<char*> pointers(std::vector<std::string>& v) {
  std::vector<char*> p;
  for (auto& s : v) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

// Runs `c` once; returns false when it could not start or did not exit 0.
bool run_once(Command& c, long long& wall, long long& cpu) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  auto argv = pointers(c.words);
  auto envp = pointers(c.env);
  const long long start = now_ns();
  pid_t pid = 0;
  const int err = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) return false;
  int status = 0;
  rusage ru{};
  if (wait4(pid, &status, 0, &ru) != pid) return false;
  wall = now_ns() - start;
  cpu = cpu_ns(ru);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: alternate ROUNDS SPEC [WARMUP]\n");
    return 2;
  }
  const long rounds = std::strtol(argv[1], nullptr, 10);
  const long warmup = argc == 4 ? std::strtol(argv[3], nullptr, 10) : 3;
  std::vector<Command> commands;
  if (rounds < 1 || warmup < 0 || !parse_spec(argv[2], commands)) {
    std::fprintf(stderr, "alternate: bad rounds or spec %s\n", argv[2]);
    return 2;
  }
  std::vector<Command> between;
  for (size_t i = 0; i < commands.size();) {
    if (commands[i].label == "between") {
      between.push_back(std::move(commands[i]));
      commands.erase(commands.begin() + static_cast<long>(i));
    } else {
      ++i;
    }
  }
  const size_t n = commands.size();
  if (n == 0) {
    std::fprintf(stderr, "alternate: nothing to time in %s\n", argv[2]);
    return 2;
  }
  for (long r = -warmup; r < rounds; ++r) {
    const size_t first = static_cast<size_t>(r < 0 ? 0 : r) % n;
    for (size_t i = 0; i < n; ++i) {
      Command& c = commands[(first + i) % n];
      if (r >= 0 && r % c.every != 0) continue;
      if (r < 0 && c.every > 1 && r != -warmup) continue;  // slow commands warm up once
      long long wall = 0;
      long long cpu = 0;
      for (Command& b : between) {
        if (!run_once(b, wall, cpu)) {
          std::fprintf(stderr, "alternate: %s failed\n", b.words[0].c_str());
          return 1;
        }
      }
      if (!run_once(c, wall, cpu)) {
        std::fprintf(stderr, "alternate: %s failed (%s)\n", c.label.c_str(), c.words[0].c_str());
        return 1;
      }
      if (r >= 0) std::printf("%ld %s %lld %lld\n", r, c.label.c_str(), wall, cpu);
    }
  }
  return 0;
}
