/**
 * One record, one line. `JSON.stringify` (and pino) leave U+2028, U+2029 and
 * the C1 controls U+0080–U+009F raw, as JSON allows; but Python's
 * `splitlines` and several log shippers break a line at U+2028, U+2029 and
 * U+0085 (NEL), so a client's e-mail or user agent could start a forged
 * line, and C1 controls (U+009B is CSI) act on the terminal of whoever reads
 * the log. Inside a JSON string, `\uXXXX` is the same value: an escaped line
 * parses to exactly what was logged.
 */

/** U+007F (DEL), the C1 controls, U+2028 and U+2029. */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u2028\u2029]/;
const UNSAFE_IN_JSON_ALL = /[\u007f-\u009f\u2028\u2029]/g;

/** What a terminal may act on: every control character (C0, DEL, C1) and U+2028/U+2029. */
const UNSAFE_ON_TERMINAL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
/** The same, line feeds aside: for text laid out in lines on purpose. */
const UNSAFE_ON_TERMINAL_BUT_LF = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/g;

function escapeChar(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * JSON text with DEL, the C1 controls, U+2028 and U+2029 escaped: the same
 * JSON value, on one line however it is split. Outside its strings JSON text
 * holds only ASCII, so every such character is inside a string. One scan when
 * there is none (the usual case), and no copy.
 */
export function lineSafe(json: string): string {
  return UNSAFE_IN_JSON.test(json) ? json.replace(UNSAFE_IN_JSON_ALL, escapeChar) : json;
}

/**
 * Text for a terminal: every control character escaped as `\uXXXX`, C0
 * (ESC, CR, LF …) included. For text that should be one line of JSON but
 * may not be (an entry another writer put in a stream): a valid one-line
 * JSON text holds no raw C0 control, so it keeps its value.
 * @param keepLineFeeds for text laid out in lines on purpose (pino-pretty's)
 */
export function terminalSafe(text: string, keepLineFeeds = false): string {
  return text.replace(keepLineFeeds ? UNSAFE_ON_TERMINAL_BUT_LF : UNSAFE_ON_TERMINAL, escapeChar);
}
