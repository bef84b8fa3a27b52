"""The command `ropecheck` of an installed package (pyproject.toml [project.scripts]).

The wheel carries the C++ command as ropecheck/bin/ropecheck (python/CMakeLists.txt); the script pip
writes into the environment's bin/ runs main(), which replaces the Python process with that command
and its arguments: its exit status, output and signals are the command's own. The command finds the
package's golden suites beside it, in ropecheck/golden (gate/CMakeLists.txt).
"""
import os
import sys

COMMAND = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "ropecheck")


def main():
    try:
        # argv[0] stays the script's, as the user ran it: the command's usage lines name it.
        os.execv(COMMAND, [sys.argv[0], *sys.argv[1:]])
    except OSError as error:
        # A package without its command: the build folder's (BUILD/bin/ropecheck is the command
        # there), or a broken install: one line, exit 2.
        print(f"ropecheck: cannot run the package's command {COMMAND}: {error.strerror} "
              "(expected: the ropecheck/bin/ropecheck that `pip install` puts into the package)", file=sys.stderr)
        return 2
