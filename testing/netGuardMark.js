'use strict';
/**
 * What testing/netGuard.js says when it refuses, for the tests that read it (testing/run.ts): kept apart from the
 * guard itself, whose loading installs the guard in the process that loads it.
 */

/** The start of the line a refusal writes on stderr. */
const REFUSED_MARK = 'test network guard: refused';
/** The exit code of a process the guard ends. */
const REFUSED_EXIT = 97;

module.exports = { REFUSED_MARK, REFUSED_EXIT };
