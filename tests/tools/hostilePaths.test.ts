/**
 * Every path of the service user's that a remote script names is in the hostile suite's list (testing/hostilePaths.ts,
 * with how root treats it there): a script that gains one fails here until the list, and so the suite's plants
 * (tests/e2e/hostileUser.test.ts) and docs/security.md's table, say how root treats it.
 */
import * as fs from 'fs';
import * as path from 'path';
import { PROJECT_DIR } from '../../testing/run';
import { ROOT_TOUCHES, scriptTouches } from '../../testing/hostilePaths';

describe("the paths of the service user's that root touches", () => {
  it("are each in the hostile suite's list, and the list names no path the scripts no longer touch", () => {
    expect([...scriptTouches()].sort()).toEqual(Object.keys(ROOT_TOUCHES).sort());
  });

  it("are each a row of docs/security.md's table of what the service user can write", () => {
    const doc = fs.readFileSync(path.join(PROJECT_DIR, 'docs/security.md'), 'utf8');
    for (const touch of Object.keys(ROOT_TOUCHES)) {
      const [script, parameter] = touch.split(' ');
      expect(doc).toContain(`| \`${script}\` | \`${parameter}\` |`);
    }
  });
});
