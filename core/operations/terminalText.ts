/**
 * Text from a node (its log, its recorded files, its RPC answers) made safe to print on the operator's terminal: what
 * the service user or the network wrote there must not drive the terminal (move the cursor, rewrite the title, hide
 * lines, set a clipboard).
 */

/** OSC (ESC ] … ended by BEL or ESC \), and DCS, SOS, PM and APC strings (ESC P, X, ^, _ … ended by ESC \). */
const STRINGS = /\x1b[\]PX^_][\s\S]*?(?:\x07|\x1b\\|$)|[\x90\x98\x9d\x9e\x9f][\s\S]*?(?:\x07|\x9c|\x1b\\|$)/g;
/** CSI (ESC [ or the 8-bit 0x9b, parameters, intermediates, a final byte). */
const CSI = /(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?/g;
/** Any other escape sequence: ESC, its intermediates and one final character. */
const ESCAPES = /\x1b[\x20-\x2f]*[\x30-\x7e]?/g;
/** Every other C0 and C1 control character and DEL, except newline and tab. */
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/**
 * The text without terminal escape sequences (CSI, OSC and the others) and without control characters other than
 * newline and tab.
 */
export function withoutControlSequences(text: string): string {
  return text.replace(STRINGS, '').replace(CSI, '').replace(ESCAPES, '').replace(CONTROLS, '');
}
