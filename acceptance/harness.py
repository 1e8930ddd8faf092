"""What the acceptance scripts share: named checks counted into a report, and the loop that
runs a script's sections, reports a section that raised, and prints the summary."""

import traceback


class Report:
    def __init__(self):
        self.passed = 0
        self.failures = []
        self.section = ""

    def check(self, name, cond, detail=None):
        if cond:
            self.passed += 1
        else:
            msg = f"[{self.section}] {name}"
            if detail is not None:
                msg += f"\n      got: {detail!r}"[:2000]
            self.failures.append(msg)
            print(f"  FAIL {name}" + (f": {detail!r}"[:2000] if detail is not None else ""))
        return bool(cond)

    def eq(self, name, got, want):
        return self.check(f"{name} == {want!r}", got == want, got)

    def raises(self, name, exc_type, fn, /, **kwargs):
        """Calls fn(**kwargs) and checks that it raises exc_type; returns the exception."""
        try:
            result = fn(**kwargs)
        except exc_type as e:
            self.check(f"{name} raises {exc_type.__name__}", True)
            return e
        except Exception as e:  # noqa: BLE001 - any other error is a failure of this check
            self.check(f"{name} raises {exc_type.__name__}", False, f"{type(e).__name__}: {e}")
            return None
        self.check(f"{name} raises {exc_type.__name__}", False, f"returned {result!r}")
        return None

    def ok(self, name, fn, /, **kwargs):
        """Calls fn(**kwargs), which must succeed; returns its result (None on failure)."""
        try:
            result = fn(**kwargs)
        except Exception as e:  # noqa: BLE001
            self.check(f"{name} succeeds", False, f"{type(e).__name__}: {e}")
            return None
        self.check(f"{name} succeeds", True)
        return result


def run_sections(report, title, sections, stop=lambda section, exc: False):
    """Runs `section_*` functions in order; a section that raises is one failed check, and
    `stop(section_name, exc)` says whether the rest can still run. Returns the exit status."""
    print(title)
    for section in sections:
        report.section = section.__name__.removeprefix("section_")
        print(f"- {report.section}")
        try:
            section()
        except Exception as e:  # noqa: BLE001
            report.check("section ran to the end", False, f"{type(e).__name__}: {e}")
            traceback.print_exc()
            if stop(report.section, e):
                break
    print()
    print(f"{report.passed} passed, {len(report.failures)} failed")
    for f in report.failures:
        print(f"  FAIL {f}")
    return 1 if report.failures else 0
