#!/usr/bin/env python3
"""Checks a JUnit XML file against the shape Jenkins' JUnit plugin (and GitLab, GitHub reporters)
read: testsuites > testsuite[name, tests, failures, skipped] > testcase[name, classname] >
failure[message] | skipped | system-out, with the counts matching the test cases. Prints one line
per test case, "NAME STATUS" (pass, failure, skipped), and exits 1 with the reason otherwise."""
import sys
import xml.etree.ElementTree as ET


def fail(why):
    print(f"invalid JUnit: {why}", file=sys.stderr)
    sys.exit(1)


def main(path):
    root = ET.parse(path).getroot()  # a real XML parser: malformed markup raises here
    if root.tag != "testsuites":
        fail(f"root element is {root.tag}, not testsuites")
    suites = list(root)
    if not suites or any(s.tag != "testsuite" for s in suites):
        fail("testsuites must hold testsuite elements only")
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for suite in suites:
        for attr in ("name", "tests", "failures", "skipped"):
            if attr not in suite.attrib:
                fail(f"testsuite without {attr}")
        cases = list(suite)
        if any(c.tag != "testcase" for c in cases):
            fail("testsuite must hold testcase elements only")
        counts = {"tests": len(cases), "failures": 0, "skipped": 0}
        for case in cases:
            for attr in ("name", "classname"):
                if not case.attrib.get(attr):
                    fail(f"testcase without {attr}")
            kinds = [child.tag for child in case]
            if any(k not in ("failure", "skipped", "system-out") for k in kinds):
                fail(f"testcase {case.attrib['name']}: unexpected children {kinds}")
            if "failure" in kinds and "skipped" in kinds:
                fail(f"testcase {case.attrib['name']}: both failure and skipped")
            status = "pass"
            for child in case:
                if child.tag == "failure":
                    if "message" not in child.attrib:
                        fail(f"testcase {case.attrib['name']}: failure without message")
                    status = "failure"
                    counts["failures"] += 1
                elif child.tag == "skipped":
                    status = "skipped"
                    counts["skipped"] += 1
            print(case.attrib["name"], status)
        for key, value in counts.items():
            if int(suite.attrib[key]) != value:
                fail(f"testsuite {key}={suite.attrib[key]} but its test cases say {value}")
            totals[key] += value
    for key, value in totals.items():
        if key in root.attrib and int(root.attrib[key]) != value:
            fail(f"testsuites {key}={root.attrib[key]} but its suites say {value}")


if __name__ == "__main__":
    main(sys.argv[1])
