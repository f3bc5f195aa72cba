/**
 * Names people type that are shown or mailed elsewhere: one line of printable text. Control and
 * format characters (C*) and the line and paragraph separators would let a name add lines to a
 * mail's headers or body, or hide text in a page.
 */
export const ONE_LINE = /^[^\p{C}\p{Zl}\p{Zp}]*$/u;

/** `text` as one printable line of at most `max` characters, for names stored before the rule. */
export function oneLine(text: string, max = 120): string {
  return text
    .replace(/[\p{C}\p{Zl}\p{Zp}]+/gu, ' ')
    .trim()
    .slice(0, max);
}
