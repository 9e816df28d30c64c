/**
 * How the program stops `pulumi up` before anything is declared: a RunError, whose message the engine shows alone.
 * Its stack is left empty: the SDK hides a RunError's stack anyway, but still formats the whole error with
 * util.inspect for its trace (cmd/run: the uncaught handler's span event), which for an error thrown from the
 * program took about 10 s of CPU and ended in a RangeError: a refusal took far longer than a preview.
 */
import * as pulumi from '@pulumi/pulumi';

/** A RunError saying `message`, without the stack nobody is shown. */
export function stopRun(message: string): pulumi.RunError {
  const error = new pulumi.RunError(message);
  error.stack = '';
  return error;
}
