"""What the peers' test scripts share: a list of failed checks, and the sanity check of an
adapter's mapping on a report's plotted points."""


class Checks:
    """expect() records and prints each failed check; status() is the test's exit code."""

    def __init__(self, name):
        self.name, self.failures = name, []

    def expect(self, condition, message):
        if not condition:
            self.failures.append(message)
            print("FAILED:", message)

    def status(self):
        print(f"{self.name}: {len(self.failures)} failed checks")
        return 1 if self.failures else 0


def expect_sane_points(checks, name, group):
    """An adapter that maps the spec right is exact at position 0 (e = 0) and within e < 1e4 up to
    position 1000: a wrong layout, base or sign gives e ~ 1e6-1e7 there, a float32 angle 1e2-1e3."""
    for position, e, _ in group["points"]:
        if position == 0:
            checks.expect(e == 0, f"{name} group {group['group']}: e = {e} at position 0")
        elif position <= 1000:
            checks.expect(float(e) < 1e4, f"{name} group {group['group']}: e = {e} at position {position}")
