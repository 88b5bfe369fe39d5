# SPDX-License-Identifier: Apache-2.0
"""Runs the client's unittest modules and reports in TAP (ok / not ok / # SKIP,
then the plan), as tests/run.sh expects. Usage: python3 tap.py MODULE..."""

import os
import sys
import traceback
import unittest

# The source tree's package, unless the installed one is under test.
if not os.environ.get("KW_PY_INSTALLED"):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class TapResult(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.n = 0
        self.bad = False

    def _name(self, test):
        return f"python {test.id().split('.', 1)[-1]}: {test.shortDescription() or ''}".rstrip(": ")

    def addSuccess(self, test):
        self.n += 1
        print(f"ok {self.n} - {self._name(test)}", flush=True)

    def _fail(self, test, err):
        self.n += 1
        self.bad = True
        print(f"not ok {self.n} - {self._name(test)}")
        for line in "".join(traceback.format_exception(*err)).splitlines()[-12:]:
            print(f"#   {line}")
        sys.stdout.flush()

    addFailure = _fail
    addError = _fail

    def addSubTest(self, test, subtest, err):
        # unittest reports neither success nor failure for a test whose
        # subtests failed: each failed subtest is a "not ok" of its own.
        if err is not None:
            self._fail(subtest, err)

    def addSkip(self, test, reason):
        self.n += 1
        print(f"ok {self.n} # SKIP {self._name(test)}: {reason}", flush=True)

    def addExpectedFailure(self, test, err):
        self._fail(test, err)

    def addUnexpectedSuccess(self, test):
        self._fail(test, (AssertionError, AssertionError("unexpected success"), None))


def main(modules):
    suite = unittest.TestSuite()
    loader = unittest.TestLoader()
    for m in modules:
        suite.addTests(loader.loadTestsFromName(m))
    result = TapResult()
    suite.run(result)
    print(f"1..{result.n}")
    return 1 if result.bad or result.n == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
