#include "judge/verdict.h"

namespace ropecheck::judge {

RunVerdict run_verdict(std::span<const GroupResult> groups, int identities_failed, int identities_judged) {
  bool any_fail = identities_failed > 0, any_judged = identities_judged > 0;
  for (const GroupResult& g : groups) {
    any_fail = any_fail || g.verdict == "fail";
    any_judged = any_judged || g.verdict == "pass";
  }
  RunVerdict v;
  v.judged_nothing = !any_judged && !any_fail;
  v.pass = !any_fail && any_judged;
  return v;
}

}  // namespace ropecheck::judge
