/**
 * The head of a guest's answer, as the prelude writes it (`toResult`): lines of the status, the
 * number of headers, then each header's name and value on lines of their own; for a text answer the
 * text follows on the next line, to the end. Lines, not JSON: QuickJS takes longer to
 * JSON.stringify the same head, and the text needs no escaping.
 */
export type AnswerHead = { status: number; headers: [string, string][]; text?: string };

/** Reads an answer; `withText` when the text follows the head. A status that is not a whole number up to 999 is NaN; a head the prelude never writes throws. */
export function readAnswer(s: string, withText: boolean): AnswerHead {
  let at = s.indexOf('\n');
  if (at < 0) throw new Error('the answer head is malformed');
  // what is not a status (NaN, 1.5, a subclass's string) stays NaN: the caller answers it as a bad status
  const line = s.slice(0, at);
  const status = /^\d{1,3}$/.test(line) ? Number(line) : NaN;
  let end = s.indexOf('\n', at + 1);
  const count = Number(s.slice(at + 1, end < 0 ? s.length : end));
  if (!Number.isInteger(count) || count < 0) throw new Error('the answer head is malformed');
  const headers: [string, string][] = [];
  at = end;
  for (let i = 0; i < count; i++) {
    const nameEnd = at < 0 ? -1 : s.indexOf('\n', at + 1);
    if (nameEnd < 0) throw new Error('the answer head is malformed');
    end = s.indexOf('\n', nameEnd + 1);
    headers.push([s.slice(at + 1, nameEnd), s.slice(nameEnd + 1, end < 0 ? s.length : end)]);
    at = end;
  }
  if (!withText) return { status, headers };
  return { status, headers, text: at < 0 ? '' : s.slice(at + 1) };
}
