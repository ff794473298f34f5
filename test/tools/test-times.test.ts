/**
 * The slowest-files report (scripts/ci/test-times.ts) reads each file's time
 * from the outermost `<testsuite>` of bun's JUnit report, not from its
 * describe blocks, and lists the slowest first.
 */
import { expect, test } from 'bun:test'
import { fileTimes, slowestLines } from '../../scripts/ci/test-times.ts'

const REPORT = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="bun test" tests="6" assertions="9" failures="0" skipped="0" time="4.5">
  <testsuite name="test/api/cancel.test.ts" file="test/api/cancel.test.ts" tests="3" time="0.9">
    <testsuite name="what cancel does" file="test/api/cancel.test.ts" line="28" tests="2" time="0.7">
      <testcase name="a &gt; b" classname="what cancel does" time="0.5" file="test/api/cancel.test.ts" line="29" assertions="2" />
    </testsuite>
    <testcase name="top level" time="0.1" file="test/api/cancel.test.ts" line="40" assertions="1" />
  </testsuite>
  <testsuite name="test/pg/faults.test.ts" file="test/pg/faults.test.ts" tests="2" time="3.5">
    <testsuite name="PostgreSQL faults" file="test/pg/faults.test.ts" tests="2" time="3.4" />
  </testsuite>
  <testsuite name="test/tools/empty.test.ts" file="test/tools/empty.test.ts" tests="1" time="0.1">
  </testsuite>
</testsuites>`

test("each file's time and number of tests, from its outermost testsuite only", () => {
  expect(fileTimes(REPORT)).toEqual([
    { file: 'test/api/cancel.test.ts', seconds: 0.9, tests: 3 },
    { file: 'test/pg/faults.test.ts', seconds: 3.5, tests: 2 },
    { file: 'test/tools/empty.test.ts', seconds: 0.1, tests: 1 },
  ])
})

test('the slowest first, as many as asked', () => {
  expect(slowestLines(fileTimes(REPORT), 2)).toEqual(['    3.5 s     2 tests  test/pg/faults.test.ts', '    0.9 s     3 tests  test/api/cancel.test.ts'])
})
