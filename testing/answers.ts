/**
 * Table tests of a function of one value: one test per case, each that the function gives the case's answer.
 */

/**
 * One test per `[input, answer]` case, that `fn(input)` is `answer` (toBe); `title` names a case as it.each does
 * (`%s`, `%j`: the input, then the answer).
 */
export function itAnswers<I, O>(title: string, fn: (input: I) => O, cases: Array<[I, O]>): void {
  it.each(cases)(title, (input, answer) => {
    expect(fn(input)).toBe(answer);
  });
}
