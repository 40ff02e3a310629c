// Where the source tree this binary was built from keeps its skill.
//
// Contract: kBuildSkillDir is an absolute path fixed at configure time,
// defined in one generated source file of the build directory, so that no
// other object's compile line names the checkout (a compiler cache then
// shares them between clones). It may not exist at run time (an installed
// binary); locate_skill() checks it last.
#pragma once

namespace devgraph {

extern const char* const kBuildSkillDir;

}  // namespace devgraph
